"""workspace room."""
