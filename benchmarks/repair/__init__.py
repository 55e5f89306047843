"""A repair benchmark on real code: seeded one-line bugs in PyPI sdists, lsp-agent vs mini-swe-agent."""
