"""tools room."""
