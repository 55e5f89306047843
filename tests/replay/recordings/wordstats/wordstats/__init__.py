"""Small statistics about the words of a text."""
