"""Stage 4, write: the results files a run leaves (Weval's comparison file and its artefacts, AgentV's
results JSONL), written as the reference tools write them."""
