"""index room."""
