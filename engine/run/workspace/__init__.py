"""AgentV workspaces: the folder a test's agent works in (copied from a template, shared or per test),
the repositories cloned into it, and the setup/teardown scripts and hooks around it."""
