"""Conversations: the run's chat with the model, compaction, sessions and their store, context."""
