"""The test support shipped with the package: a scripted OpenAI-compatible model server, reply fuzzing."""
