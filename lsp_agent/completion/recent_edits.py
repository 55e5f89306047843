"""The regions the user edited lately (from didChange ranges), newest first, for the completion prompt."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

MAX_REGIONS = 8
NEARBY_LINES = 6  # an edit this close to a kept region extends it
SHOWN_AROUND = 3  # lines of context shown each side of a region


@dataclass
class EditRegion:
    """Lines of one file the user changed (0-based, inclusive), and when."""

    path: Path
    first: int
    last: int
    at: float


class RecentEdits:
    """A short list of edited regions; line numbers follow later edits above them only roughly (good enough to
    show the code there again)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.regions: list[EditRegion] = []
        self._clock = clock

    def note(self, path: Path, first: int, last: int, inserted_lines: int) -> None:
        """An edit replaced lines first..last with text of `inserted_lines` line breaks."""
        shift = inserted_lines - (last - first)
        now = self._clock()
        for region in self.regions:
            if region.path == path and region.first > last:
                region.first, region.last = region.first + shift, region.last + shift
        end = first + max(0, inserted_lines)
        for i, region in enumerate(self.regions):
            if (
                region.path == path
                and region.first - NEARBY_LINES <= end
                and first <= region.last + NEARBY_LINES
            ):
                merged = EditRegion(path, min(region.first, first), max(region.last, end), now)
                del self.regions[i]
                self.regions.insert(0, merged)
                return
        self.regions.insert(0, EditRegion(path, first, end, now))
        del self.regions[MAX_REGIONS:]

    def forget(self, path: Path) -> None:
        """Drop a file's regions (it was closed or deleted)."""
        self.regions = [r for r in self.regions if r.path != path]

    def shown(
        self, read_lines: Callable[[Path], list[str] | None], skip: Callable[[EditRegion], bool]
    ) -> list[tuple[Path, int, str]]:
        """(path, first line, text) of each region as it reads now, newest first, leaving out the skipped ones."""
        out: list[tuple[Path, int, str]] = []
        for region in self.regions:
            if skip(region):
                continue
            lines = read_lines(region.path)
            if not lines:
                continue
            first = max(0, region.first - SHOWN_AROUND)
            last = min(len(lines) - 1, region.last + SHOWN_AROUND)
            if first <= last:
                out.append((region.path, first, "\n".join(lines[first : last + 1])))
        return out
