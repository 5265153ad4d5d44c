"""Running eval files (`evalspec run`): a checked file becomes a plan, the plan a stream of events.

Start with `runner.plan_for(analysis, options)` and `runner.run(plan, options)`; events.py says what a
run yields. The stages are the subpackages plan/, generate/, score/, write/ (each one's __init__ says
what it does); what runs them sits at the top. Every module of this package is on this map
(tests/run/test_package_map.py checks it).

The stages, in order (a format's part of a stage is a class or function in the stage's module):

    1. plan/      plan_for.py         Plan = WevalPlan | AgentvPlan, plan_for
                  weval.py, agentv.py each format's planner; error.py (PlanError)
                  selection.py (--prompt/--test), shard.py (--shard), skip_invalid.py, items.py
                  (fingerprints), run_label.py (Weval's content hash), replay.py (earlier answers as answers),
                  cell_index.py (each cell's place in the plan: per-cell numbers kept in arrays by it),
                  targets_file.py (targets.yaml as AgentV reads it)
    2. generate/  answers.py          a cell's answers: from the run database, a batch, a replay or the provider
                  calls.py (calls under rate limits, retries as events), agentv_messages.py (a test's input
                  as a chat request), batch_stage.py + batch_journal.py (--batch: the calls as batches
                  first; batch_parts.py makes the parts), waiting_answers.py (--batch: their answers on
                  disk until the cells take them), batch_rounds.py (--batch: calls cells name only as they
                  run, as later rounds), batch_cancel.py (batches left running after Ctrl-C)
    3. score/     functions.py        Weval function points (agentv_entries.py: AgentV's deterministic
                                      assertions)
                  judges.py           Weval's LLM judges and key points (weval_judge.py); agentv_judges.py
                                      AgentV's (agentv_judge.py, agent_judge.py); judge_calls.py
                  scripts.py          users' scripts: code_judge.py, judge_payload.py, target_proxy.py
                  embeddings.py       Weval similarity (after every cell)
                  agentv_scorable.py  which AgentV assertions a run can score, and why not
                  judged_types.py     each judged assertion type's prompt and reply reader (its registry
                                      entry names it)
    4. write/     weval.py            the comparison file and artefacts: cell_store.py, weval_results.py,
                                      git_source.py; weval_rebuild.py (a shard's comparison object
                                      rebuilt from its run database, for `evalspec merge`)
                  agentv.py           the rows into the database, the results JSONL exported from it:
                                      agentv_measured.py, agentv_outcomes.py (how each cell ended)
                  files.py (atomic and streamed JSON), jsjson.py (JSON as JavaScript writes it)

What runs the stages (the top of the package):

    runner.py         the API: plan_for, run (a Pipeline of the plan's format)
    pipeline.py       the one engine: Pipeline runs a format's declared stages (before the cells, each
                      cell's stages in order on the worker pool, after them, write) over the run database
    weval_stages.py   Weval, agentv_stages.py Agentv: each format's stage lists and stage functions
    pool.py           the workers over the cells; events.py what they yield; options.py how to run
    split.py          the cells over several processes (--processes): forked cell processes whose
                      records and events the run's process writes and adopts
    journal/          the run's store: database.py (one SQLite file a run: its tables, its one writer's
                      transactions, its lock), run_store.py (open_journal, load, read_header: what the
                      runner and the readers call), records.py (the records written and read back),
                      held_records.py (records held back to go out with the cell's next write),
                      packed_rows.py (AgentV rows deflated against the run's dictionary),
                      legacy_jsonl.py (an earlier evalspec's JSONL journals, read for one release)

Around them:

    cost/             estimate.py (--dry-run), spend.py (what calls cost), budget.py (caps),
                      guard.py (both wired into a runner), cost_file.py, cost_text.py
    before any call   preflight.py (keys, providers, targets)
    workspace/        AgentV workspaces: lifecycle.py (template, isolation, scripts, hooks), repos.py
    the CLI           cli.py, render.py (progress and table), outcome.py (did any call answer);
                      merge.py + merge_cli.py (`evalspec merge` of shards)
"""
