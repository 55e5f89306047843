"""Sandboxed code execution: scratch copies of the workspace, isolated runs, a persistent interpreter, CodeAct."""
