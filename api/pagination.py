"""Mastodon's paging: `max_id`, `since_id`, `min_id`, `limit`, and `Link` headers.

A list is newest first. `max_id` asks for what is older than an id; `since_id` for
the newest page above an id; `min_id` for the page just above an id (oldest of those
first read, newest first returned): the way a client catches up without gaps. The
`Link` header names the next (older) page by `max_id` and the previous (newer) one
by `min_id`, with the other parameters of the request kept.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import urlencode

from api.http import ApiError

ID_MAX = 2**63 - 1


def _id(values, name: str) -> int | None:
    raw = values.get(name)
    if raw in (None, ""):
        return None
    raw = str(raw)
    if not raw.isdecimal() or len(raw) > 19:
        raise ApiError(422, f"Validation failed: {name} must be an id")
    return min(int(raw), ID_MAX)


@dataclass(frozen=True, slots=True)
class Window:
    """Which part of a newest-first list a request asks for."""

    max_id: int | None
    since_id: int | None
    min_id: int | None
    limit: int

    @classmethod
    def of(cls, request, *, default: int = 20, maximum: int = 40) -> Window:
        values = request.GET
        raw = values.get("limit")
        limit = default
        if raw not in (None, ""):
            try:
                limit = int(raw)
            except ValueError as error:
                raise ApiError(
                    422, "Validation failed: limit must be a number"
                ) from error
        return cls(
            max_id=_id(values, "max_id"),
            since_id=_id(values, "since_id"),
            min_id=_id(values, "min_id"),
            # Mastodon's `limit_param`: a negative limit counts as its absolute value.
            limit=max(1, min(abs(limit), maximum)),
        )

    @property
    def floor(self) -> int | None:
        """The lowest id wanted (exclusive), from `min_id` or `since_id`."""
        if self.min_id is not None:
            return self.min_id
        return self.since_id

    @property
    def from_oldest(self) -> bool:
        """`min_id`: the page just above it, not the newest page above it."""
        return self.min_id is not None


def link_header(
    request, *, next_max_id: int | str | None, prev_min_id: int | str | None
) -> dict[str, str]:
    """The `Link` header (as a headers dict, empty when there is no link) for the
    older page below `next_max_id` and the newer page above `prev_min_id`."""
    kept = [
        (name, value)
        for name in request.GET
        if name not in ("max_id", "min_id", "since_id")
        for value in request.GET.getlist(name)
    ]
    base = request.build_absolute_uri(request.path)
    links = []
    if next_max_id is not None:
        query = urlencode([*kept, ("max_id", str(next_max_id))])
        links.append(f'<{base}?{query}>; rel="next"')
    if prev_min_id is not None:
        query = urlencode([*kept, ("min_id", str(prev_min_id))])
        links.append(f'<{base}?{query}>; rel="prev"')
    return {"Link": ", ".join(links)} if links else {}
