"""Running eval files (`evalspec run`): a checked file becomes a plan, the plan a stream of events.

Start with `runner.plan_for(analysis, options)` and `runner.run(plan, options)`; events.py says what a
run yields. Every module of this package is on this map (tests/run/test_package_map.py checks it).

The stages, in order (a module each; a format's part of a stage is a class or function there):

    1. plan       plan.py             Plan = WevalPlan | AgentvPlan, plan_for
                  weval_plan.py, agentv_plan.py, plan_error.py
                  selection.py (--prompt/--test), shard.py (--shard), skip_invalid.py, items.py (fingerprints),
                  run_label.py (Weval's content hash), replay.py (replay: earlier answers as the answers)
    2. generate   generate.py         a cell's answers: from the journal, a batch, a replay or the provider
                  calls.py (calls under rate limits, retries as events), agentv_messages.py (a test's input
                  as a chat request), batch_stage.py + batch_journal.py (--batch: the calls as batches first),
                  batch_rounds.py (--batch: calls cells name only as they run, sent as later rounds)
    3. score      score_functions.py  Weval function points, AgentV's deterministic assertions
                  score_judges.py     LLM judges and key points: weval_judge.py, agentv_judge.py, agent_judge.py
                  score_scripts.py    users' scripts: code_judge.py, judge_payload.py, target_proxy.py
                  score_embeddings.py Weval similarity (after every cell)
    4. write      write_weval.py      the comparison file and artefacts: cell_store.py, weval_results.py,
                                      git_source.py
                  write_agentv.py     the results JSONL: agentv_measured.py
                  files.py (atomic and streamed JSON), jsjson.py (JSON as JavaScript writes it)

What runs the stages:

    runner.py         the API: plan_for, run (dispatch on the plan's type)
    skeleton.py       RunSkeleton: journal, start, before the cells, the cells, after them, write, finish
    weval_runner.py   WevalRun, agentv_runner.py AgentvRun: each format's hooks, wiring a cell's stages
    pool.py           the workers over the cells; events.py what they yield; options.py how to run
    held_records.py   journal records held back to go out with the cell's next write
    journal.py        the journal (one writer, one reader), journal_records.py its records, run_lock.py

Around them:

    costs             cost_estimate.py (--dry-run), spend.py (what calls cost), budget.py (caps),
                      cost_guard.py (both wired into a runner), cost_file.py, cost_text.py
    before any call   preflight.py (keys, providers, targets), agentv_scorable.py (what can be scored)
    AgentV workspaces workspace_setup.py, workspace_repos.py
    the CLI           cli.py, render.py (progress and table), outcome.py (did any call answer);
                      merge.py + merge_cli.py (`evalspec merge` of shards)
"""
