"""Stage 3, score: the answers scored by functions (deterministic checks), LLM judges and key points,
users' scripts, and (Weval, after every cell) embeddings. What cannot be scored says why and never
counts as a pass."""
