"""The model client: litellm requests, replies read and parsed into actions, errors, retries, budgets."""
