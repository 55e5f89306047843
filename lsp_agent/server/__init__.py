"""server room."""
