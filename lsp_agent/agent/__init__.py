"""agent room."""
