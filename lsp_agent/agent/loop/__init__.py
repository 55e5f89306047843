"""The agent loop: one run, its styles (ReAct, CodeAct, planned), the tool step, what a run leaves behind."""
