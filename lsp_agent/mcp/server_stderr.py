"""What a stdio MCP server writes to stderr: captured in a temporary file, kept small, its tail shown in errors."""

from __future__ import annotations

import os
import tempfile
from typing import IO

TAIL_CHARS = 1500
STDERR_KEEP_BYTES = 1_000_000


class ServerStderr:
    """The stderr capture of one stdio server process (a new file for each start)."""

    def __init__(self) -> None:
        # append mode: the child shares the O_APPEND file description, so trimming it is safe
        self.file: IO[str] = tempfile.TemporaryFile(mode="a+", encoding="utf-8", errors="replace")

    def tail(self) -> str:
        """The last lines the server wrote to stderr, on one line."""
        try:
            self.file.flush()
            self.file.seek(0, os.SEEK_END)
            size = self.file.tell()
            self.file.seek(max(0, size - TAIL_CHARS * 4))
            text = self.file.read()
        except (OSError, ValueError):
            return ""
        lines = [line.strip() for line in text.splitlines() if line.strip()]
        return " | ".join(lines[-6:])[-TAIL_CHARS:]

    def trim(self) -> None:
        """Keep a chatty server's captured stderr small: only its tail is ever shown."""
        try:
            if os.fstat(self.file.fileno()).st_size > STDERR_KEEP_BYTES:
                tail = self.tail()
                self.file.seek(0)
                self.file.truncate(0)
                self.file.write(tail + "\n")
                self.file.flush()
        except (OSError, ValueError):
            pass

    def close(self) -> None:
        """Release the capture file."""
        try:
            self.file.close()
        except OSError:
            pass
