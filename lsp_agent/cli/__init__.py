"""The `lsp-agent` command line: one module per command, the command tree and dispatch in main.py."""
