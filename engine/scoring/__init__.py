"""Pure scoring: Weval point functions and coverage, AgentV assertions and aggregation, JS regex/sandbox."""
