"""Statuses as HTML: the one place that renders a status, for every page with some.

A timeline page shows up to 30 statuses; rendered through a template each, they were
most of the page's time (docs/BENCHMARKS.md). Here a status's markup is built in
plain Python, and the part that depends on nothing but the status (author link,
permalink, escaped text) is memoized: `_fragments` is a pure function of the
frozen `Status` (its id, author and text all take part in the cache key), so a
cached fragment can never show anything but that status. What changes per page,
the author's display name and avatar (their `Card`, read with the page), the
relative time and the author's own Delete button, is added on each render: an edited
name or avatar shows on old statuses at once.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime
from functools import lru_cache
from html import escape

from jinja2 import pass_context
from markupsafe import Markup

from accounts.domain import Card, avatar_url
from config.context_processors import csrf_input_html
from config.reverse import url_for
from timeline.domain import Status

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


@lru_cache(maxsize=20_000)
def _fragments(status: Status) -> tuple[str, str, str]:
    """The markup before the author's card, between it and the relative time, and
    after that. Every value from a user goes through `html.escape` (the characters
    Django's `escape` replaces); ids are ints."""
    iso = datetime.fromtimestamp(status.created, tz=UTC).isoformat()
    author = escape(status.author)
    text = escape(status.text).replace("\n", "<br>")
    head = f'<li class="status" data-status-id="{status.id:d}">'
    meta = (
        f'<span class="handle">@{author}</span></a> '
        f'<a class="permalink" href="{escape(status.url)}"><time datetime="{iso}" '
        "data-relative>"
    )
    tail = f'</time></a></div><p class="status-text">{text}</p>'
    return head, meta, tail


def _card_html(status: Status, card: Card | None) -> str:
    """The author's avatar and display name: never cached (they can change)."""
    href = escape(status.author_url)
    name = escape(card.name if card is not None and card.name else status.author)
    src = escape(
        card.avatar_url if card is not None else avatar_url(status.author_id, "")
    )
    return (
        f'<a class="status-avatar" href="{href}" tabindex="-1" aria-hidden="true">'
        f'<img class="avatar" src="{src}" alt="" width="48" height="48" '
        'loading="lazy"></a><div class="status-body"><div class="status-meta">'
        f'<a class="status-author" href="{href}"><span class="display-name">{name}'
        "</span> "
    )


def _delete_form(status: Status, csrf_token: str) -> str:
    action = escape(url_for("timeline:status_delete", status.id))
    return (
        f'<form method="post" action="{action}" class="status-actions">'
        f"{csrf_input_html(csrf_token)}"
        '<button type="submit" class="link-button danger" '
        'aria-label="Delete this status">Delete</button></form>'
    )


def status_list(
    statuses: list[Status],
    label: str,
    *,
    viewer_id: int | None,
    csrf_token: str,
    cards: dict[int, Card] | None = None,
) -> Markup:
    """Statuses as `<ol class="statuses">`, newest first, each with its author's
    card from `cards` (the generated avatar and the username without one); the
    viewer's own statuses get a Delete button (the page's one CSRF token serves
    every form)."""
    now = time.time()
    cards = cards or {}
    items = []
    for status in statuses:
        head, meta, tail = _fragments(status)
        card = _card_html(status, cards.get(status.author_id))
        delete = (
            _delete_form(status, csrf_token) if status.author_id == viewer_id else ""
        )
        items.append(
            f"{head}{card}{meta}{relative(status.created, now)}{tail}{delete}"
            "</div></li>"
        )
    return Markup(
        f'<ol class="statuses" aria-label="{escape(label)}">{"".join(items)}</ol>'
    )


@pass_context
def status_list_tag(
    context, statuses: list[Status], label: str, cards: dict[int, Card] | None = None
) -> Markup:
    """`{{ status_list(statuses, label, cards) }}` in templates, for the page's
    viewer (`cards`: the page's authors' cards, `Page.cards`)."""
    viewer = context.get("viewer")
    viewer_id = viewer.id if viewer is not None and viewer.is_authenticated else None
    token = str(context.get("csrf_token", "")) if viewer_id is not None else ""
    return status_list(
        statuses, label, viewer_id=viewer_id, csrf_token=token, cards=cards
    )
