"""lsp-agent: a coding agent inside any LSP editor."""

__version__ = "0.1.0"
