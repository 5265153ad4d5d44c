"""Stage 1, plan: a checked file becomes a WevalPlan or an AgentvPlan (the cells a run will fill), or a
PlanError says why it cannot run. Selection (--prompt/--test), sharding, skipping invalid items, item
fingerprints, Weval's run label and replay sources are decided here, before any call."""
