"""An MCP server that fails at start-up, as a misconfigured one would (writes a reason to stderr, exits 1)."""

import sys

sys.stderr.write("broken server: missing NOTES_TOKEN environment variable\n")
sys.exit(1)
