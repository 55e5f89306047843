"""The agent run: the loop, its model conversation, tool step, run styles, events, transcript, permissions."""
