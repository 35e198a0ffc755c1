"""Rendering of statuses.

A timeline page renders up to 30 statuses; as an `{% include %}` each, Django's
template engine spent about 80% of the page's time on them (see
docs/BENCHMARKS.md). `status_list` builds the same escaped markup in plain
Python in a fraction of that.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from html import escape

from django import template
from django.utils.safestring import SafeString, mark_safe

from timeline.domain import Status

register = template.Library()

_UNITS = (("year", 31536000), ("month", 2592000), ("week", 604800), ("day", 86400),
          ("hour", 3600), ("minute", 60))  # fmt: skip


def relative(created: float, now: float | None = None) -> str:
    """'just now', '3 minutes ago', '2 days ago' (site.js keeps it fresh)."""
    seconds = (now if now is not None else time.time()) - created
    if seconds < 45:
        return "just now"
    for unit, size in _UNITS:
        n = int(seconds // size)
        if n >= 1:
            return f"{n} {unit}{'s' if n > 1 else ''} ago"
    return "just now"


@register.simple_tag(takes_context=True)
def status_list(context, statuses: list[Status], label: str) -> SafeString:
    """A list of statuses as `<ol class="statuses">`, newest first."""
    viewer = context.get("viewer")
    viewer_id = viewer.id if viewer is not None and viewer.is_authenticated else None
    token = str(context.get("csrf_token", "")) if viewer_id is not None else ""
    now = time.time()
    items = "".join(_item(status, viewer_id, token, now) for status in statuses)
    return mark_safe(  # noqa: S308 - _item escapes every value it interpolates
        f'<ol class="statuses" aria-label="{escape(label)}">{items}</ol>'
    )


def _item(status: Status, viewer_id: int | None, token: str, now: float) -> str:
    """One status as `<li data-status-id>`: author link, escaped text, time, delete.

    Every value from a user goes through `html.escape` (the characters Django's
    `escape` replaces); ids are ints. The page's one CSRF token serves every form.
    """
    delete = ""
    if viewer_id == status.author_id:
        delete = (
            f'<form method="post" action="/s/{status.id:d}/delete/" '
            'class="status-actions"><input type="hidden" name="csrfmiddlewaretoken" '
            f'value="{escape(token)}"><button type="submit" class="link-button danger" '
            'aria-label="Delete this status">Delete</button></form>'
        )
    iso = datetime.fromtimestamp(status.created, tz=UTC).isoformat()
    author = escape(status.author)
    text = escape(status.text).replace("\n", "<br>")
    return (
        f'<li class="status" data-status-id="{status.id:d}"><div class="status-meta">'
        f'<a class="status-author" href="/u/{author}/">@{author}</a> '
        f'<a class="permalink" href="/s/{status.id:d}/"><time datetime="{iso}" '
        f"data-relative>{relative(status.created, now)}</time></a></div>"
        f'<p class="status-text">{text}</p>{delete}</li>'
    )
