"""The semantic tokens' legend (what semantic_tokens.py names its types and modifiers): a module of its
own so the language server can announce it without loading the engine."""

TOKEN_TYPES = ("function", "string", "variable", "keyword")
TOKEN_MODIFIERS = ("deterministic", "judged", "negated", "declaration", "defaultLibrary")
