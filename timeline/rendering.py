"""Statuses as HTML: the one place that renders a status, for every page with some.

A timeline page shows up to 30 statuses; rendered through a template each, they were
most of the page's time (docs/BENCHMARKS.md). Here a status's markup is built in
plain Python, and the part that depends on nothing but the status (author link,
permalink, text with its links, `timeline.richtext`, who reposted it and what it
replies to) is memoized: `_fragments` is a pure function of the frozen `Status`
(its id, author, text and mentions all take part in the cache key; its counts and
the viewer's state do not: `Status`), so a cached fragment can never show anything
but that status. What changes from page to page, the author's display name and
avatar (their `Card`, read with the page: an edited name or avatar shows on old
statuses at once), the author's own Delete button, the counts and the viewer's Like
and Repost state (`_social`), is memoized apart, by `_row`, keyed on all of them; the
relative time and the page's CSRF field are added on each render. The display name
sits in a `<bdi>`: its direction controls cannot reorder the @handle beside it.
"""

from __future__ import annotations

import re
import secrets
import time
from collections.abc import Callable
from datetime import UTC, datetime
from functools import lru_cache
from html import escape

from jinja2 import pass_context
from markupsafe import Markup

from accounts.domain import Card, avatar_url
from config.context_processors import csrf_input_html
from config.reverse import url_maker
from timeline import richtext
from timeline.domain import NotificationItem, Poll, Status

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
def _fragments(status: Status, url, quote_name: str = "") -> tuple[str, str, str, str]:
    """The markup that never changes: the row's start, the lines above its author
    (who reposted it, what it replies to), what comes between the author's card
    and the relative time, and the rest. Every value from a user goes through
    `html.escape` (the characters Django's `escape` replaces, in the text by
    `timeline.richtext`); ids are ints. `url` (`url_maker`, one function per
    script prefix) keys the memo: its links are the request's prefix's.
    `quote_name`: the display name of the author of the status it quotes, where
    the page read their card ('': their @handle alone)."""
    iso = datetime.fromtimestamp(status.created, tz=UTC).isoformat()
    text = richtext.to_html(status.text, dict(status.mentions))
    before = ""
    author = status.author
    if status.repost_of is not None:
        # A repost shows the original, under a line that names who reposted it.
        before = (
            f'<p class="repost-line"><a href="{escape(status.author_url)}">'
            f"@{escape(status.author)}</a> reposted</p>"
        )
        author = status.repost_author
    if status.reply_to is not None:
        before += (
            f'<p class="reply-line">Replying to <a href="{escape(status.reply_url)}">'
            f"@{escape(status.reply_author)}</a></p>"
        )
    head = f'<li class="status" data-status-id="{status.id:d}">'
    meta = (
        f'<span class="handle">@{escape(author)}</span></a> '
        f'<a class="permalink" href="{escape(status.original_url)}">'
        f'<time datetime="{iso}" data-relative>'
    )
    quiet = (
        ' <span class="unlisted" title="Not in everyone\'s posts nor on tag pages">'
        "Unlisted</span>"
        if status.unlisted
        else ' <span class="direct" title="Only the people in this conversation '
        'see it">Direct</span>'
        if status.direct
        else ""
    )
    body = f'<p class="status-text">{text}</p>'
    if status.quote is not None:
        body += _quote_embed(status, url, quote_name)
    if status.spoiler:
        # A content warning: the text stays folded until the reader opens it (no
        # script needed); the warning is isolated, so its direction controls cannot
        # reorder the button beside it.
        body = (
            '<details class="spoiler"><summary><bdi class="spoiler-text">'
            f"{escape(status.spoiler)}</bdi> "
            '<span class="spoiler-show" aria-hidden="true"></span></summary>'
            f"{body}</details>"
        )
    edited = ""
    if status.edited is not None:
        # Mastodon's mark: the edit's time on hover, its versions one click away.
        edited_iso = datetime.fromtimestamp(status.edited, tz=UTC).isoformat()
        edited = (
            f' <a class="edited" href="{escape(status.history_url)}" '
            f'title="Edited {edited_iso}">Edited</a>'
        )
    tail = f"</time></a>{edited}{quiet}</div>{body}"
    return head, before, meta, tail


QUOTE_UNAVAILABLE = (
    '<blockquote class="quote-embed unavailable">'
    '<p class="quote-unavailable">This post is unavailable.</p></blockquote>'
)


# The quote states whose embed is folded, and why (`Status.quote_state`).
_QUOTE_FOLDED = {"blocked_account": "blocked", "muted_account": "muted"}


def _quote_embed(status: Status, url, name: str = "") -> str:
    """The status a status quotes, embedded under its text (`timeline.quotes`): its
    author, its text (folded under its content warning), a link to its page, and
    of a quote of a quote the inner one's page only (one level, as Mastodon's).
    Shown only when the row's read checked that the reader may see it
    (`Status.quote_state`), folded under "Show anyway" when they blocked or muted
    its author, else "This post is unavailable." and nothing of it."""
    quote = status.quote
    assert quote is not None
    folded = _QUOTE_FOLDED.get(status.quote_state or "")
    if status.quote_state != "accepted" and folded is None:
        return QUOTE_UNAVAILABLE
    iso = quote.created_at.isoformat()
    shown = f'<bdi class="display-name">{escape(name)}</bdi> ' if name else ""
    text = f'<p class="quote-text">{richtext.to_html(quote.text, {})}</p>'
    if quote.spoiler:
        text = (
            '<details class="spoiler"><summary><bdi class="spoiler-text">'
            f"{escape(quote.spoiler)}</bdi> "
            '<span class="spoiler-show" aria-hidden="true"></span></summary>'
            f"{text}</details>"
        )
    inner = (
        '<p class="quote-nested"><a href="'
        f'{escape(url("timeline:status_detail", quote.quote_of))}">Quoting another '
        "post</a></p>"
        if quote.quote_of is not None
        else ""
    )
    embed = (
        f'<blockquote class="quote-embed" data-quote-id="{quote.id:d}">'
        '<p class="quote-meta"><a class="quote-author" '
        f'href="{escape(quote.author_url)}">{shown}@{escape(quote.author)}</a> · '
        f'<a class="quote-link" href="{escape(quote.url)}">'
        f'<time datetime="{iso}">{quote.created_at:%d %b %Y}</time></a></p>'
        f"{text}{inner}</blockquote>"
    )
    if folded is None:
        return embed
    # Mastodon's web UI: why it is hidden, and "Show anyway" (no script: a
    # <details> the reader opens).
    return (
        '<details class="quote-folded"><summary><span class="quote-why">'
        f"This post is hidden because you {folded} @{escape(quote.author)}."
        "</span> Show anyway</summary>"
        f"{embed}</details>"
    )


def _card_html(status: Status, card: Card | None, before: str, url) -> str:
    """The shown author's avatar and display name (a repost's: the original's
    author): never cached (they can change); `before` goes above the author."""
    if status.repost_of is not None:
        uid, username = status.repost_uid or 0, status.repost_author
    else:
        uid, username = status.author_id, status.author
    href = escape(url("timeline:profile", username))
    name = escape(card.name if card is not None and card.name else username)
    src = escape(avatar_url(uid, card.avatar if card is not None else "", url))
    return (
        f'<a class="status-avatar" href="{href}" tabindex="-1" aria-hidden="true">'
        f'<img class="avatar" src="{src}" alt="" width="48" height="48" '
        f'loading="lazy"></a><div class="status-body">{before}'
        '<div class="status-meta">'
        f'<a class="status-author" href="{href}"><bdi class="display-name">{name}'
        "</bdi> "
    )


@lru_cache(maxsize=20_000)
def _links(url, sid: int) -> tuple[str, str, str, str, str, str, str]:
    """A status's escaped links (its page and its like, unlike, repost, unrepost,
    delete and quote actions): a pure function of its id and `url` (`url_maker`, one
    function per deployment prefix), built once, not on every render."""
    return tuple(
        escape(url(f"timeline:{name}", sid))
        for name in (
            "status_detail",
            "like",
            "unlike",
            "repost",
            "unrepost",
            "status_delete",
            "status_quote",
        )
    )


def _count(n: int | None) -> str:
    return f' <span class="count">{n:d}</span>' if n else ""


def _social(status: Status, form_head: str | None, url, quotable: bool) -> str:
    """The row's Reply link and Like and Repost buttons (acting on a repost's
    original), with its counts and the viewer's state where they were read, and
    its Quote link where the viewer may quote it (`quotable`, `_quotable`).
    `form_head`: the CSRF and `next` fields every form of the page starts with
    (None for a visitor, who gets the counts without buttons)."""
    page, like, unlike, repost, unrepost, _, quote = _links(url, status.original_id)
    reply = (
        f'<a class="reply-link" href="{page}#reply">Reply{_count(status.replies)}</a>'
    )
    if form_head is None:
        likes = f'<span class="likes">Likes{_count(status.likes)}</span>'
        reposts = f'<span class="reposts">Reposts{_count(status.reposts)}</span>'
        return f'<div class="status-social">{reply} {likes} {reposts}</div>'
    if status.liked is None or status.reposted is None:
        # The viewer's state was not read with this row (a repost's row, a pulled
        # author's status): a form would not know whether to like or undo, so the
        # row links to the original's page, where both are shown and work.
        likes = f'<a class="link-button like" href="{page}#actions">Like</a>'
        reposts = f'<a class="link-button repost" href="{page}#actions">Repost</a>'
        quoting = _quote_action(quote) if quotable else ""
        return f'<div class="status-social">{reply} {likes} {reposts}{quoting}</div>'
    liked, reposted = status.liked, status.reposted
    likes = _button(
        form_head, "like", unlike if liked else like, "Like", liked, status.likes
    )
    if status.direct:  # never reposted (`timeline.direct`)
        return f'<div class="status-social">{reply} {likes}</div>'
    reposts = _button(
        form_head,
        "repost",
        unrepost if reposted else repost,
        "Repost",
        reposted,
        status.reposts,
    )
    quoting = _quote_action(quote) if quotable else ""
    return f'<div class="status-social">{reply} {likes} {reposts}{quoting}</div>'


def _quotable(status: Status, card: Card | None, viewer_id: int | None) -> bool:
    """Whether the viewer's quote of the row's status (a repost's original) would
    be accepted (`quotes.quote_target`'s rule): never a direct message; a private
    account's by its author alone (the author's card says it, read with the row;
    none read: offered, and the quote page answers)."""
    if status.direct:
        return False
    private = card is not None and card.private
    return not private or status.shown_author_id == viewer_id


def _quote_action(href: str) -> str:
    """The row's Quote link: the compose box with the status above it (a GET: the
    post is the compose box's CSRF-protected form, `timeline.views.status_quote`)."""
    return f' <a class="link-button quote" href="{href}">Quote</a>'


def _button(
    form_head: str, name: str, action: str, label: str, done: bool, n: int | None
) -> str:
    """A Like or Repost form: `action` likes or, when `done`, undoes."""
    return (
        f'<form method="post" action="{action}" class="inline-form">{form_head}'
        f'<button type="submit" class="link-button {name}" '
        f'aria-pressed="{"true" if done else "false"}">{label}{_count(n)}'
        "</button></form>"
    )


def _closes(poll: Poll, expired: bool) -> str:
    """When a poll closes (or closed), as a date that does not age in the memo."""
    at = poll.expires_at
    label = f"{at.day} {at:%b %Y, %H:%M} UTC"
    verb = "Closed" if expired else "Closes"
    iso = at.isoformat(timespec="seconds")
    return f'{verb} <time datetime="{iso}">{label}</time>'


def _people(n: int) -> str:
    return "1 person" if n == 1 else f"{n:,} people"


def _poll_html(status: Status, form_head: str | None, url, own: bool, expired: bool):
    """A poll's options: a form to vote for a signed-in reader who may vote (not
    its author, not voted yet, still open: read with the row), else its results,
    each option's share (hidden until it closes when its author asked, from her
    too, as Mastodon's: its API gives no one the counts, so its app shows her
    none); where the row was read without the tally (a repost's row, a pulled
    author's status) its options, with its page one click away."""
    poll = status.poll
    assert poll is not None
    options = poll.options
    meta = _closes(poll, expired)
    page = _links(url, status.original_id)[0]
    if status.votes is None or status.voters is None:
        items = "".join(f"<li><bdi>{escape(o)}</bdi></li>" for o in options)
        return (
            f'<div class="poll"><ul class="poll-options">{items}</ul>'
            f'<p class="poll-meta"><a href="{page}">Vote or see the results</a>'
            f" · {meta}</p></div>"
        )
    voters = _people(status.voters)
    voted = status.voted or ()
    if form_head is not None and not own and not expired and not voted:
        kind = "checkbox" if poll.multiple else "radio"
        action = escape(url("timeline:poll_vote", status.original_id))
        items = "".join(
            f'<label class="poll-option"><input type="{kind}" name="choice" '
            f'value="{i:d}"> <bdi>{escape(o)}</bdi></label>'
            for i, o in enumerate(options)
        )
        hint = " <small>(choose one or more)</small>" if poll.multiple else ""
        return (
            f'<form method="post" action="{action}" class="poll">{form_head}'
            f"<fieldset><legend>Poll{hint}</legend>{items}</fieldset>"
            '<p class="poll-meta"><button type="submit" class="button">Vote</button>'
            f" {voters} · {meta}</p></form>"
        )
    hidden = poll.hide_totals and not expired
    # Each option's share of the people who voted, as Mastodon's apps show it
    # (`voters_count`): in a poll of several choices the shares add up to more
    # than 100%, and an option everyone chose shows 100%.
    total = status.voters or sum(status.votes) or 1
    rows = []
    for i, (option, n) in enumerate(zip(options, status.votes, strict=True)):
        mine = ' <span class="poll-mine">(your choice)</span>' if i in voted else ""
        chosen = " chosen" if i in voted else ""
        if hidden:
            share = ""
        else:
            percent = round(100 * n / total)
            share = (
                f'<span class="poll-share">{percent:d}%</span> '
                f'<meter min="0" max="100" value="{percent:d}" '
                f'title="{n:,} vote{"" if n == 1 else "s"}"></meter> '
            )
        rows.append(
            f'<li class="poll-result{chosen}">{share}<bdi>{escape(option)}</bdi>'
            f"{mine}</li>"
        )
    note = " · Results when it closes" if hidden else ""
    return (
        f'<div class="poll"><ul class="poll-results">{"".join(rows)}</ul>'
        f'<p class="poll-meta">{voters}{note} · {meta}</p></div>'
    )


def _delete_form(status: Status, token_html: str, url) -> str:
    action = _links(url, status.id)[5]
    return (
        f'<form method="post" action="{action}" class="status-actions">{token_html}'
        '<button type="submit" class="link-button danger" '
        'aria-label="Delete this status">Delete</button></form>'
    )


# Where the page's CSRF field, and where its forms' CSRF and `next` fields, go in a
# memoized row (`_row`): per-process secrets, so no text a user wrote can stand for
# them. The `next` field is the request's path and query, which a user chooses: it is
# never part of a memoized row, so no request can grow the memo beyond its rows.
_TOKEN = f"\x00{secrets.token_hex(16)}\x00"
_FORM_HEAD = f"\x00{secrets.token_hex(16)}\x00"
_MARKERS = re.compile(f"({re.escape(_TOKEN)}|{re.escape(_FORM_HEAD)})")


def _marked(text: str) -> tuple[str, ...]:
    """`text` cut at its markers, each marker the constant itself (so a page finds
    them by identity): a page joins the parts with its own fields in their place,
    a fifth of the time of two `str.replace` over the row."""
    return tuple(
        _TOKEN if part == _TOKEN else _FORM_HEAD if part == _FORM_HEAD else part
        for part in _MARKERS.split(text)
    )


# About 1.6 KB a row of ASCII text (a character of an emoji takes 4 bytes), and
# some 0.4 KB for its parts' objects (`_marked`): some 10 MB a process, at most 25.
@lru_cache(maxsize=5_000)
def _row(
    status: Status,
    counts: tuple,
    card: Card | None,
    own: bool,
    url,
    signed_in: bool,
    fold: str = "",
    quote_name: str = "",
    quotable: bool = True,
) -> tuple[str, tuple[str, ...]]:
    """A row's markup before its relative time, and after it in parts, with the
    page's CSRF field and forms' head to put in (`_TOKEN`, `_FORM_HEAD`, `_marked`):
    a pure function of its
    arguments (the status's immutable fields, its `counts` and the viewer's state
    (with a poll's tally and the viewer's choices, then whether it has closed),
    the author's card, whether the viewer wrote it, the prefix's `url`, whether a
    viewer is signed in, the titles of the filters that `fold` it, its quoted
    author's display name, whether the viewer may quote it), so a memoized
    row shows what a fresh one would. A page of 30 rows built from scratch was
    about a tenth of its Python (docs/BENCHMARKS.md)."""
    head, before, meta, tail = _fragments(status, url, quote_name)
    end = "</div></li>"
    if fold:
        # A keyword filter's warning (`timeline.filters`): the row folded under
        # it, one click from shown, as a content warning is (no script needed).
        head = (
            f'<li class="status filtered" data-status-id="{status.id:d}">'
            '<details class="filter-fold"><summary>Filtered: '
            f'<bdi class="filter-titles">{escape(fold)}</bdi> '
            '<span class="spoiler-show" aria-hidden="true"></span></summary>'
            '<div class="filtered-row">'
        )
        end = "</div></div></details></li>"
    start = f"{head}{_card_html(status, card, before, url)}{meta}"
    form_head = _FORM_HEAD if signed_in else None
    delete = _delete_form(status, _TOKEN, url) if own else ""
    poll = (
        _poll_html(status, form_head, url, own, counts[-1])
        if status.poll is not None
        else ""
    )
    if poll and status.spoiler:
        # A content warning folds the poll with the text (`_fragments`: the fold
        # ends the tail), as Mastodon's: its options may be what it warns of.
        assert tail.endswith("</details>")
        tail, poll = tail[: -len("</details>")], f"{poll}</details>"
    social = _social(status, form_head, url, quotable)
    return start, _marked(f"{tail}{poll}{social}{delete}{end}")


def status_list(
    statuses: list[Status],
    label: str,
    *,
    viewer_id: int | None,
    csrf_token: str,
    back: str = "",
    cards: dict[int, Card] | None = None,
    list_id: str = "",
    filtered: dict[int, str] | None = None,
    revoke_of: int | None = None,
) -> Markup:
    """Statuses as `<ol class="statuses">`, newest first, each with its author's
    card from `cards` (the generated avatar and the username without one), its
    Reply, Like and Repost (whose forms return to `back`); the viewer's own
    statuses get a Delete button (the page's one CSRF token serves every form).
    `list_id`: the list's id, for a pager that extends it (`timeline/_pager.html`);
    `filtered`: the statuses folded by the viewer's filters (sid -> their titles,
    `timeline.filters.Filters.fold`); `revoke_of`: the viewer's status these quote
    (its quotes page, for its author): each row gets a "Revoke quote" button."""
    rows = _row_maker(viewer_id, csrf_token, back, cards, filtered)
    items = []
    for status in statuses:
        parts = rows(status)
        if revoke_of is not None and viewer_id is not None:
            parts[-1] = _with_revoke(parts[-1], status, revoke_of, csrf_token, back)
        items += parts
    id_attr = f' id="{escape(list_id)}"' if list_id else ""
    return Markup(
        f'<ol class="statuses"{id_attr} aria-label="{escape(label)}">'
        f"{''.join(items)}</ol>"
    )


def _with_revoke(
    last: str, status: Status, sid: int, csrf_token: str, back: str
) -> str:
    """A row's last part with, for a status quoting status `sid` (not revoked),
    the quoted author's "Revoke quote" form (`timeline.views.quote_revoke`, a
    CSRF-protected POST back to `back`) at its end."""
    quote = status.quote
    if quote is None or quote.id != sid or quote.revoked or status.repost_of:
        return last
    assert last.endswith("</li>")
    action = escape(url_maker()("timeline:quote_revoke", sid, status.id))
    nxt = f'<input type="hidden" name="next" value="{escape(back)}">' if back else ""
    form = (
        f'<form class="revoke-form" method="post" action="{action}">'
        f"{csrf_input_html(csrf_token)}{nxt}"
        '<button type="submit" class="link-button">Revoke quote</button></form>'
    )
    return f"{last[: -len('</li>')]}{form}</li>"


def _quote_name(status: Status, cards: dict[int, Card]) -> str:
    """The display name of the author of the status a status quotes, where the
    page read their card; '' for none."""
    if status.quote is None:
        return ""
    card = cards.get(status.quote.author_id)
    return card.name if card is not None else ""


def _row_maker(
    viewer_id: int | None,
    csrf_token: str,
    back: str,
    cards: dict[int, Card] | None,
    filtered: dict[int, str] | None,
) -> Callable[[Status], list[str]]:
    """A function from a status to its row's parts (`_row`, the relative time, the
    page's fields put in), with what every row of the page shares built once."""
    now = time.time()
    cards = cards or {}
    filtered = filtered or {}
    url = url_maker()
    signed_in = viewer_id is not None
    # What every form of the page starts with, built once (not once a form).
    token_html = csrf_input_html(csrf_token) if signed_in else ""
    nxt = f'<input type="hidden" name="next" value="{escape(back)}">' if back else ""
    form_head = f"{token_html}{nxt}"

    def parts(status: Status) -> list[str]:
        card = cards.get(status.shown_author_id)
        start, rest = _row(
            status,
            (
                status.likes,
                status.reposts,
                status.replies,
                status.liked,
                status.reposted,
                status.voters,
                status.votes,
                status.voted,
                status.poll is not None and status.poll.expired(now),
            ),
            card,
            status.author_id == viewer_id,
            url,
            signed_in,
            filtered.get(status.id, ""),
            # No call for the many rows without a quote.
            "" if status.quote is None else _quote_name(status, cards),
            _quotable(status, card, viewer_id),
        )
        items = [start, relative(status.created, now)]
        if signed_in:
            items += [
                form_head if p is _FORM_HEAD else token_html if p is _TOKEN else p
                for p in rest
            ]
        else:
            items += rest
        return items

    return parts


def _page_args(context) -> tuple[int | None, str, str]:
    """The page's viewer id, CSRF token (for a viewer) and the path its rows'
    forms return to: the context's `page_path` where the view names it (a page
    rendered after a failed POST, at the form's POST-only address), else the
    request's path and query."""
    viewer = context.get("viewer")
    viewer_id = viewer.id if viewer is not None and viewer.is_authenticated else None
    token = str(context.get("csrf_token", "")) if viewer_id is not None else ""
    back = context.get("page_path") or ""
    request = context.get("request")
    if not back and request is not None:
        back = request.get_full_path()
    return viewer_id, token, back


@pass_context
def status_list_tag(
    context,
    statuses: list[Status],
    label: str,
    cards: dict[int, Card] | None = None,
    list_id: str = "",
    filtered: dict[int, str] | None = None,
    revoke_of: int | None = None,
) -> Markup:
    """`{{ status_list(statuses, label, cards) }}` in templates, for the page's
    viewer (`cards`: the page's authors' cards, `Page.cards`; `list_id`,
    `filtered`, `revoke_of`: as `status_list`). The rows' forms return to the page
    shown: the context's `page_path` where the view names it (a page rendered after
    a failed POST, at the form's POST-only address), else the request's path and
    query."""
    viewer_id, token, back = _page_args(context)
    return status_list(
        statuses,
        label,
        viewer_id=viewer_id,
        csrf_token=token,
        back=back,
        cards=cards,
        list_id=list_id,
        filtered=filtered,
        revoke_of=revoke_of,
    )


@pass_context
def conversation_list_tag(
    context, conversations: list, cards: dict[int, Card]
) -> Markup:
    """`{{ conversation_list(found.conversations, found.cards) }}`: the Messages
    page's conversations (`timeline.direct`) as `<ul class="conversations">`, each
    with the others in it, its newest message's row and a Remove button; unread
    ones marked, for sight and aloud. Built in one pass, the rows as `status_list`
    builds them."""
    viewer_id, token, back = _page_args(context)
    rows = _row_maker(viewer_id, token, back, cards, None)
    url = url_maker()
    token_html = csrf_input_html(token)
    items = []
    for conversation in conversations:
        others = conversation.others
        names = ", ".join(_actor_link(user.username, url) for user in others)
        label = ", ".join(f"@{user.username}" for user in others) or "yourself"
        remove = escape(url("timeline:conversation_remove", conversation.id))
        unread = conversation.unread
        items.append(
            f'<li class="conversation{" unread" if unread else ""}" '
            f'data-conversation-id="{conversation.id:d}"><p class="with">'
            f"{_UNREAD[1] if unread else ''}With {names or 'yourself'}</p>"
            '<ol class="statuses" aria-label="Newest message">'
            f"{''.join(rows(conversation.last))}</ol>"
            f'<form method="post" action="{remove}" class="inline-form">{token_html}'
            '<button type="submit" class="link-button" aria-label="Remove the '
            f'conversation with {escape(label)} from your messages">Remove</button>'
            "</form></li>"
        )
    return Markup(f'<ul class="conversations" id="conversations">{"".join(items)}</ul>')


# Notifications: a group's sentence by kind (a follow request's links to the
# requests, `_says`); a kind the page does not know says nothing.
_SAYS = {
    "follow": "followed you.",
    "follow_approved": "approved your follow request.",
    "like": "liked your status.",
    "repost": "reposted your status.",
    "mention": "mentioned you.",
    "reply": "replied to you.",
    "update": "edited a status you reposted.",
    "quote": "quoted your post.",
    "poll": "poll has ended.",  # after "@alice's" (`notification_list`)
}
# A row's start and what follows its attributes, read or unread (said aloud too).
_READ = ('<li class="notification"', "")
_UNREAD = (
    '<li class="notification unread"',
    '<span class="visually-hidden">New: </span>',
)
QUOTE_LENGTH = 140  # of a group's status, cut at a word as Jinja's `truncate`
_WARNED = "Content warning: "  # what a warned status's quote starts with


def _truncated(text: str, length: int = QUOTE_LENGTH, leeway: int = 5) -> str:
    # Jinja's `truncate(length)`: whole when within `leeway` of it, else cut
    # before the last word that does not fit, with "...".
    if len(text) <= length + leeway:
        return text
    return text[: length - 3].rsplit(" ", 1)[0] + "..."


@lru_cache(maxsize=4096)
def _quote(status: Status, url) -> str:
    """A group's status, its text cut short, linking to it: a pure function of the
    frozen `Status` (its counts take no part in its key) and `url` (one function
    per script prefix: `url_maker`)."""
    page = _links(url, status.id)[0]
    # A status with a content warning is quoted by its warning, not its text: the
    # warning cut on its own (cut with the prefix, one without a space, as in
    # Japanese, was cut at the prefix's space, the whole warning dropped).
    quoted = (
        _WARNED + _truncated(status.spoiler, QUOTE_LENGTH - len(_WARNED))
        if status.spoiler
        else _truncated(status.text)
    )
    return (
        f'<blockquote class="notification-status"><a href="{page}">'
        f"{escape(quoted)}</a></blockquote>"
    )


@lru_cache(maxsize=4096)
def _when(at: int) -> str:
    """The group's time (unix ms), as UTC (site.js shows it relative)."""
    moment = datetime.fromtimestamp(at / 1000, tz=UTC)
    return (
        f'<time class="muted" datetime="{moment.isoformat()}" data-relative>'
        f"{moment.strftime('%-d %B %Y, %H:%M')} UTC</time>"
    )


@lru_cache(maxsize=4096)
def _actor_link(username: str, url) -> str:
    """A group's actor: `@name`, linking to their profile (a pure function of the
    name, which never changes, and `url`, one function per script prefix)."""
    return (
        f'<a href="{escape(url("timeline:profile", username))}">@{escape(username)}</a>'
    )


def _says(kind: str, url) -> str:
    if kind == "follow_request":
        href = escape(url("timeline:follow_requests"))
        return f'asked to follow you: <a href="{href}">follow requests</a>.'
    return _SAYS.get(kind, "")


def _filtered_quote(status: Status, titles: str, url) -> str:
    """A group's status folded by the viewer's filters: their titles, not its text."""
    page = _links(url, status.id)[0]
    return (
        f'<blockquote class="notification-status filtered"><a href="{page}">'
        f"Filtered: <bdi>{escape(titles)}</bdi></a></blockquote>"
    )


def notification_list(
    items: list[NotificationItem],
    filtered: dict[int, str] | None = None,
    viewer_id: int | None = None,
) -> Markup:
    """Notification groups as `<ol class="notifications">`, newest first: who (the
    actors' usernames as read with the page, "and 3 others"), what, when, and the
    status it is about (by the titles of the viewer's filters that fold it:
    `filtered`, sid -> titles); unread ones marked, for sight and aloud.
    `viewer_id`: whose page it is (their own poll's end says "Your poll")."""
    url = url_maker()
    filtered = filtered or {}
    rows = []
    for item in items:
        links = [_actor_link(actor.username, url) for actor in item.actors]
        if item.others:
            names = ", ".join(links)
            names += f" and {item.others:d} other{'s' if item.others != 1 else ''}"
        elif len(links) > 1:
            names = f"{', '.join(links[:-1])} and {links[-1]}"
        else:
            names = "".join(links)
        says = _says(item.kind, url)
        if item.kind == "poll":
            # Its one actor is its author: the viewer, or whose poll they voted in.
            own = item.status is not None and item.actors and viewer_id is not None
            own = own and item.actors[0].id == viewer_id
            names, says = ("Your", "poll has ended.") if own else (f"{names}'s", says)
        head, new = _UNREAD if item.unread else _READ
        quote = ""
        if item.status is not None:
            titles = filtered.get(item.status.id)
            quote = (
                _filtered_quote(item.status, titles, url)
                if titles
                else _quote(item.status, url)
            )
        rows.append(
            f'{head} data-kind="{escape(item.kind)}">{new}'
            f"<p>{names} {says} {_when(item.at)}</p>{quote}</li>"
        )
    return Markup(f'<ol class="notifications">{"".join(rows)}</ol>')


def version_list(versions) -> Markup:
    """A status's versions (`timeline.edits.StatusVersion`, newest first) as the
    edit history shows them: which one, when, its warning and its text."""
    items = []
    last = len(versions) - 1
    for n, version in enumerate(versions):
        which = "Current version" if n == 0 else "Original" if n == last else "Earlier"
        iso = datetime.fromtimestamp(version.at, tz=UTC).isoformat()
        warning = (
            '<p class="version-spoiler">Content warning: '
            f"<bdi>{escape(version.spoiler)}</bdi></p>"
            if version.spoiler
            else ""
        )
        text = richtext.to_html(version.text, dict(version.mentions))
        items.append(
            f'<li class="version"><p class="version-meta"><strong>{which}</strong> '
            f'&middot; <time datetime="{iso}" data-relative>'
            f"{escape(relative(version.at))}</time></p>{warning}"
            f'<p class="status-text">{text}</p></li>'
        )
    return Markup(f'<ol class="versions card">{"".join(items)}</ol>')
