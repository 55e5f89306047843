"""Inline completion: repository context, fill-in-the-middle prompts, streamed requests that stop when superseded."""
