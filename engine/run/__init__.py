"""Running eval files: plans, the runner (a stream of events), result files and the `evalspec run` CLI.

Start with `plan_for(analysis, options)` and `run(plan, options)`; see events.py for what a run yields.
"""
