"""`python -m lsp_agent` runs the CLI."""

from lsp_agent.cli.main import run

run()
