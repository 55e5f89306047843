"""Replayable runs: a transcript read back as a recording, re-run against its recorded replies, compared."""
