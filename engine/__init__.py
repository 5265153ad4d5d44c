"""evalspec engine: what Weval blueprints and AgentV eval files mean, and how to run them.

Pure core: takes text, returns plain data (findings, symbols, models) with source spans.
No LSP imports, ever (see ARCHITECTURE.md).
"""

__version__ = "0.1.0"
