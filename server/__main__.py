"""`python -m evalspec_lsp` starts the language server (editors that run a module rather than a script)."""

from .main import main

raise SystemExit(main())
