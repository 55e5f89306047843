"""The workspace as the agent sees it: path safety, ignore rules, secrets, the overlay of proposed edits, proposals."""
