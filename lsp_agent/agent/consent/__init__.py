"""Consent: who may run tools that execute code or reach outside the workspace, and remembered answers."""
