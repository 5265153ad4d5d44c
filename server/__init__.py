"""evalspec-lsp: a thin Language Server Protocol adapter over the evalspec engine."""
