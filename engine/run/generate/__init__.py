"""Stage 2, generate: a cell's answers, from the journal (--resume), a provider batch (--batch), a
replayed run or a call to the model under rate limits and retries."""
