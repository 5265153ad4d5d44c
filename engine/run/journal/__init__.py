"""The run journal: every finished call and score appended as it arrives (one writer, one reader), what
`--resume` reads back, and the lock that keeps two runs off one journal."""
