"""The Agent Client Protocol front-end: `lsp-agent acp` serves the agent to Zed, JetBrains IDEs, Neovim and Emacs."""
