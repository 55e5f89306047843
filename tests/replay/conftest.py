"""The recorded workspaces under recordings/ hold their own tests, which are data here, not tests to collect."""

collect_ignore = ["recordings"]
