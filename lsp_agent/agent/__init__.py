"""The agent run in rooms (loop/, model/, conversation/, consent/, repair/) and the vocabulary they share."""
