"""Mastodon's entities (Account, Status, Relationship, Tag...) built from ours.

Plain functions that return dicts for orjson: ids as strings, times in ISO 8601,
every URL absolute, text as HTML (`timeline.richtext`, escaped). The shapes follow
Mastodon 4.3's documentation; what the site has no notion of (media, custom emoji)
is there, empty or false, so clients parse them; a
URL field the site has nothing for (an Account's `header`) names a placeholder image
rather than "", which strict clients cannot decode as a URL.

A profile's address is case-insensitive (`/u/Alice/` and `/u/alice/` show one page):
the API names it by the lowercased username everywhere (an Account's `url`, a
Mention's, the links in `content`), so a client that matches a link's href with a
Mention or an Account (Tusky, Ice Cubes) finds it whatever case the text wrote.
"""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime, timedelta
from functools import cache, lru_cache
from html import escape

from django.templatetags.static import static
from django.urls import get_script_prefix

from accounts.domain import User, avatar_url
from accounts.selectors import PageReads, users_queue
from api.http import iso
from config.reverse import url_maker
from timeline import ids, richtext
from timeline.bookmarks import status_member
from timeline.domain import QUOTE_SHOWN, AccountStats, Relationship, Status
from timeline.filters import (
    EMPTY,
    Filter,
    FilterKeyword,
    FilterMatch,
    Filters,
    viewer_filters,
)
from timeline.filters import FilterStatus as FilterStatusRow
from timeline.lists import List
from timeline.selectors import (
    accounts_queue,
    bookmarked_queue,
    muted_queue,
    pinned_queue,
    statuses_by_id_queue,
)


@dataclass(frozen=True, slots=True)
class Urls:
    """Absolute URLs for one response: `https://host` and the route reverser.
    Equal for equal hosts and script prefixes (`_fixed`'s cache key)."""

    base: str
    prefix: str
    url: object = field(compare=False, hash=False)

    @classmethod
    def of(cls, request) -> Urls:
        return cls(
            base=f"{request.scheme}://{request.get_host()}",
            prefix=get_script_prefix(),
            url=url_maker(),
        )

    def __call__(self, name: str, *args) -> str:
        return self.base + self.url(name, *args)

    def static(self, path: str) -> str:
        """The absolute URL of a file under `static/` (served by WhiteNoise)."""
        return self.base + _static_path(path)


@cache
def _static_path(path: str) -> str:
    # The static files (and a deploy's manifest of their hashed names) cannot change
    # under a running process: each is looked up once, as `config.context_processors`
    # looks up the pages' assets.
    return static(path)


# What an Account shows as its header: the site has none (Mastodon too sends an
# image, `missing.png`, for an account without one).
HEADER_PLACEHOLDER = "header.png"


def profile_url(username: str, urls: Urls) -> str:
    """A profile's address as the API gives it: by the lowercased username (see the
    module)."""
    return urls("timeline:profile", username.lower())


def _midnight(moment: float) -> str:
    """A day as Mastodon gives an account's `created_at`: midnight UTC."""
    day = datetime.fromtimestamp(moment, tz=UTC).date()
    return f"{day.isoformat()}T00:00:00.000Z"


def _note_html(bio: str) -> str:
    if not bio:
        return ""
    return "<p>" + escape(bio).replace("\n", "<br>") + "</p>"


@lru_cache(maxsize=20_000)
def _account_fixed(user: User, urls: Urls) -> dict:
    """What an Account shows of the user hash alone: a pure function of the frozen
    `User` (every field of the hash it shows takes part in its equality) and of
    the response's host and routes, kept as `_fixed` keeps a status's."""
    # A still raster image, as Mastodon's: clients draw no SVG (Tusky, UIKit apps).
    avatar = urls.base + avatar_url(user.id, user.avatar, urls.url, raster=True)
    header = urls.static(HEADER_PLACEHOLDER)
    profile = profile_url(user.username, urls)
    return {
        "id": str(user.id),
        "username": user.username,
        "acct": user.username,
        "display_name": user.name,
        "locked": user.private,
        "bot": False,
        "discoverable": True,
        "indexable": True,
        "group": False,
        "noindex": False,
        "created_at": _midnight(user.created),
        "note": _note_html(user.bio),
        "url": profile,
        "uri": profile,
        "avatar": avatar,
        "avatar_static": avatar,
        "header": header,
        "header_static": header,
        "hide_collections": user.private,
        "emojis": [],
        "fields": [],
        "roles": [],
    }


@lru_cache(maxsize=4096)
def _day(day: int) -> str:
    return (datetime(1970, 1, 1, tzinfo=UTC) + timedelta(days=day)).date().isoformat()


def account(stats: AccountStats, urls: Urls, *, source: bool = False) -> dict:
    """An Account (a CredentialAccount, with `source`, for the token's own user)."""
    user = stats.user
    last = stats.last_status_id
    entity = {
        **_account_fixed(user, urls),
        "followers_count": stats.followers,
        "following_count": stats.following,
        "statuses_count": stats.statuses,
        "last_status_at": _day(int(ids.created_of(last) // 86400)) if last else None,
    }
    if source:
        entity["source"] = {
            "privacy": "private" if user.private else "public",
            "sensitive": False,
            "language": "",
            "note": user.bio,
            "fields": [],
            "follow_requests_count": 0,
        }
        entity["role"] = {
            "id": "-99",
            "name": "",
            "permissions": "0",
            "color": "",
            "highlighted": False,
        }
    return entity


def tag(
    name: str, urls: Urls, *, history: list | None = None, following: bool = False
) -> dict:
    """A Tag (name case folded, as the site keeps tags); `following`: whether the
    signed-in viewer follows it (`timeline.tagfollows`; false for a visitor).

    Its `id` (Mastodon 4.x's, a string) is that name: the site stores no tag
    records, and the case-folded name is what every key, page and route names a
    tag by, so it is stable and unique. A status's `tags` are Mastodon's
    Status::Tag, name and url alone (`status` below)."""
    return {
        "id": name,
        "name": name,
        "url": urls("timeline:tag", name),
        "history": history or [],
        "following": following,
    }


def _content(status: Status, urls: Urls, mentions: dict[str, int] | None = None) -> str:
    """The status's text as HTML, its `mentions` linked (by default all it names)."""
    linked = dict(status.mentions) if mentions is None else mentions
    return f"<p>{richtext.to_html(status.text, linked, urls.base)}</p>"


def _mentions(status: Status, usernames: dict[int, str], urls: Urls) -> list[dict]:
    """The Mentions of a status, each user once: named as their Account is (the
    stored mention is the lowercased name, `richtext.mentioned_names`); one whose
    account is gone is left out, as Mastodon drops a deleted account's mentions."""
    shown: dict[int, str] = {}
    for name, uid in status.mentions:
        shown.setdefault(uid, name)
    return [
        {
            "id": str(uid),
            "username": usernames[uid],
            "acct": usernames[uid],
            # The stored (lowercased) name, not a read: the same address as the
            # link in `content` (`richtext.to_html`), which clients match with
            # `url`, and as the Account's (`profile_url`).
            "url": profile_url(name, urls),
        }
        for uid, name in shown.items()
        if uid in usernames
    ]


@lru_cache(maxsize=20_000)
def _fixed(status: Status, urls: Urls) -> dict:
    """A Status entity but its author, mentions, counts and the viewer's state: a pure
    function of the frozen status (its counts and the viewer's state take no part
    in its equality, `timeline.domain.Status`) and of the response's host and
    routes, so a cached one never shows anything but that status (as
    `timeline.rendering`'s fragments). Callers copy it before changing it."""
    return {
        "id": str(status.id),
        "uri": urls("timeline:status_detail", status.id),
        "url": urls("timeline:status_detail", status.id),
        "created_at": iso(status.created),
        "account": None,
        "content": _content(status, urls),
        "text": None,
        "visibility": "public",
        # A content warning makes a status sensitive, as Mastodon's does.
        "sensitive": bool(status.spoiler),
        "spoiler_text": status.spoiler,
        "media_attachments": [],
        "application": None,
        "mentions": [],
        "tags": [
            {"name": name, "url": urls("timeline:tag", name)}
            for name in richtext.hashtags(status.text)
        ],
        "emojis": [],
        "reblogs_count": 0,
        "favourites_count": 0,
        "replies_count": 0,
        "quotes_count": 0,
        "in_reply_to_id": str(status.reply_to) if status.reply_to else None,
        "in_reply_to_account_id": str(status.reply_uid) if status.reply_uid else None,
        "reblog": None,
        "quote": None,
        "poll": None,
        "card": None,
        "language": None,
        "edited_at": iso(status.edited) if status.edited is not None else None,
        "favourited": False,
        "reblogged": False,
        "muted": False,
        "bookmarked": False,
        "pinned": False,
        "filtered": [],
    }


def poll(status: Status, viewer: int | None, now: float) -> dict | None:
    """A status's poll as Mastodon's Poll (None without one): its id is the
    status's. Each option's count is null while the poll hides its totals and is
    open, as Mastodon's; `voted` and `own_votes` only for a signed-in viewer, the
    author counting as having voted (as Mastodon counts them). A status read
    without its tally (`Status.votes` None: an outbox row no read by id replaced)
    still gives a valid Poll: no counts (0 in all, null for each option) and no
    vote known."""
    found = status.poll
    if found is None:
        return None
    expired = found.expired(now)
    votes = status.votes
    shown = votes is not None and (expired or not found.hide_totals)
    entity = {
        "id": str(status.id),
        "expires_at": iso(found.expires),
        "expired": expired,
        "multiple": found.multiple,
        "votes_count": sum(votes) if votes is not None else 0,
        "voters_count": status.voters,
        "options": [
            {"title": title, "votes_count": votes[n] if shown else None}
            for n, title in enumerate(found.options)
        ],
        "emojis": [],
    }
    if viewer is not None:
        own = status.voted or ()
        entity["voted"] = viewer == status.author_id or bool(own)
        entity["own_votes"] = list(own)
    return entity


def _base_status(status: Status, author: dict, related: Related, urls: Urls) -> dict:
    usernames = related.usernames
    entity = _fixed(status, urls).copy()
    entity["account"] = author
    entity["mentions"] = _mentions(status, usernames, urls)
    if any(uid not in usernames for _, uid in status.mentions):
        # An account it named is gone: its name is not linked (it may belong to
        # someone else by now), as its Mention is left out.
        kept = {name: uid for name, uid in status.mentions if uid in usernames}
        entity["content"] = _content(status, urls, kept)
    entity["visibility"] = (
        "direct"
        if status.direct
        else "private"
        if author["locked"]
        else "unlisted"
        if status.unlisted
        else "public"
    )
    entity["reblogs_count"] = status.reposts or 0
    entity["favourites_count"] = status.likes or 0
    entity["replies_count"] = status.replies or 0
    entity["quotes_count"] = status.quotes or 0  # Mastodon 4.5's: its quotes
    entity["favourited"] = bool(status.liked)
    entity["reblogged"] = bool(status.reposted)
    if status.poll is not None:
        entity["poll"] = poll(status, related.viewer, time.time())
    entity["bookmarked"] = (
        status.bookmarked
        if status.bookmarked is not None
        else status_member(status) in related.bookmarks
    )
    entity["pinned"] = (
        status.pinned if status.pinned is not None else status.id in related.pins
    )
    entity["muted"] = (
        status.muted
        if status.muted is not None
        else status.conversation_id in related.muted
    )
    if related.filters.filters:
        entity["filtered"] = [
            filter_result(found)
            for found in related.filters.matches(status, related.viewer)
        ]
    entity["quote_approval"] = _quote_approval(status, author, related.viewer)
    if status.quote is not None:
        entity["quote"] = _quote(status, related, urls)
    return entity


def _quote_approval(status: Status, author: dict, viewer: int | None) -> dict:
    """Mastodon's QuoteApproval (`timeline.quotes`): a public account's public and
    unlisted statuses are quoted by anyone signed in, automatically; a private
    account's by no one else (their author quotes their own); direct messages by
    no one; a visitor is denied, as Mastodon's (`quote_policy_for_account`)."""
    if status.direct:
        return {"automatic": [], "manual": [], "current_user": "denied"}
    mine = viewer is not None and viewer == status.author_id
    if author["locked"]:
        return {
            "automatic": [],
            "manual": [],
            "current_user": "automatic" if mine else "denied",
        }
    return {
        "automatic": ["public"],
        "manual": [],
        # A visitor may quote nothing: Mastodon's answer is `denied`.
        "current_user": "automatic" if viewer is not None else "denied",
    }


def _quote(status: Status, related: Related, urls: Urls) -> dict:
    """Mastodon's Quote of a status quoting another (`Status.quote`): `accepted`
    with the quoted status (built from the copy the row carries: its counts and
    the viewer's state are not read, as 0 and false), whose own quote is a
    ShallowQuote (its id only, as Mastodon nests one level); `blocked_account` or
    `muted_account` with it too (the reader blocked or muted its author); `deleted`
    or `unauthorized` (also when its read could not check it) with none."""
    quote = status.quote
    assert quote is not None
    state = status.quote_state or "unauthorized"
    stats = related.accounts.get(quote.author_id)
    if state not in QUOTE_SHOWN or stats is None:
        return {"state": "unauthorized" if state in QUOTE_SHOWN else state,
                "quoted_status": None}  # fmt: skip
    inner = Status(
        id=quote.id,
        author_id=quote.author_id,
        author=quote.author,
        text=quote.text,
        created=quote.created,
        spoiler=quote.spoiler,
        unlisted=quote.unlisted,
        edited=quote.edited_at,
    )
    entity = _base_status(inner, account(stats, urls), related, urls)
    if quote.quote_of is not None:
        entity["quote"] = {"state": "accepted", "quoted_status_id": str(quote.quote_of)}
    elif quote.quote_deleted:  # written by its deletion's job (`Quote`)
        entity["quote"] = {"state": "deleted", "quoted_status_id": None}
    return {"state": state, "quoted_status": entity}


@dataclass(frozen=True, slots=True)
class Related:
    """What statuses' entities need beyond the statuses: their authors (with
    counts), statuses read by id (with counts and the viewer's state): the
    originals of reposts, and statuses whose counts were not read with them (a
    pulled author's, from their outbox), and the usernames of the users they
    mention, as their accounts spell them (none for a deleted account)."""

    accounts: dict[int, AccountStats]
    originals: dict[int, Status]
    usernames: dict[int, str] = field(default_factory=dict)
    # The viewer's bookmarks among statuses whose read did not say
    # (`selectors.bookmarked_queue`), as members.
    bookmarks: frozenset[str] = frozenset()
    # And the viewer's pins among their own statuses (`selectors.pinned_queue`).
    pins: frozenset[int] = frozenset()
    # And the conversations the viewer muted among theirs (`selectors.muted_queue`).
    muted: frozenset[int] = frozenset()
    # The viewer's keyword filters (`timeline.filters`), for `filtered`.
    filters: Filters = EMPTY
    viewer: int | None = None


def _mentioned(statuses: Iterable[Status]) -> set[int]:
    return {uid for status in statuses for uid in status.mentioned_ids}


def _unsaid(
    statuses: list[Status], originals: dict[int, Status], state: str
) -> list[Status]:
    """The statuses whose read did not say the viewer's `state` (`bookmarked`,
    `pinned`): of a repost, its original's, when known."""
    return [
        status
        for status in statuses
        if getattr(
            status if status.repost_of is None else originals.get(status.repost_of),
            state,
            None,
        )
        is None
    ]


def related_get(
    reads: PageReads,
    statuses: Iterable[Status],
    *,
    accounts: dict[int, AccountStats] | None = None,
    originals: dict[int, Status] | None = None,
    named: dict[int, str | None] | None = None,
) -> Related:
    """Read the authors and reposts' originals of these statuses but those given
    (read with the statuses: `timeline.selectors.StatusWindow`), and the users
    they mention but their authors and those `named` (uid -> username, None for
    an account that is gone: read with the statuses on one server): one round
    trip, none when nothing is missing.

    A window read on one server brings all of them (its script reads the
    mentioned users too); an original read here that mentions someone not read
    yet costs one more round trip (its mentions are known only once it is
    read)."""
    statuses = list(statuses)
    known_accounts = dict(accounts or {})
    known_originals = dict(originals or {})
    known_names = dict(named or {})
    authors: set[int] = set()
    wanted: list[int] = []
    shown: list[Status] = []  # those whose mentions their entities show
    for status in statuses:
        authors.add(status.author_id)
        if status.quote is not None and status.quote_state in QUOTE_SHOWN:
            authors.add(status.quote.author_id)  # its Quote's account
        if status.repost_of is not None:
            wanted.append(status.repost_of)
            if status.repost_uid:
                authors.add(status.repost_uid)
            continue
        shown.append(status)
        if status.likes is None:
            wanted.append(status.id)  # read without its counts
    shown += [known_originals[sid] for sid in wanted if sid in known_originals]
    missing_authors = authors - known_accounts.keys()
    missing = [sid for sid in dict.fromkeys(wanted) if sid not in known_originals]
    # Usernames only: an author's comes with their account.
    named = _mentioned(shown) - authors - known_accounts.keys() - known_names.keys()
    found_accounts = accounts_queue(reads, missing_authors) if missing_authors else None
    found_originals = statuses_by_id_queue(reads, missing) if missing else None
    found_users = users_queue(reads, uids=named) if named else None
    # A reblog's original is asked about too: clients offer Unpin from it.
    unsaid = _unsaid(statuses, known_originals, "bookmarked")
    marked = bookmarked_queue(reads, unsaid) if unsaid else None
    unpinned = _unsaid(statuses, known_originals, "pinned")
    pinned = pinned_queue(reads, unpinned) if unpinned else None
    # And whether the viewer muted their conversations (of a repost: its original's).
    unmuted = [
        known_originals.get(s.repost_of, s) if s.repost_of is not None else s
        for s in _unsaid(statuses, known_originals, "muted")
    ]
    muted = muted_queue(reads, unmuted) if unmuted else None
    asked = {s.conversation_id for s in unmuted}
    if found_accounts is not None:
        known_accounts.update(found_accounts.value)
    users: dict[int, User] = found_users.value if found_users is not None else {}
    late_muted = None
    if found_originals is not None:
        read = [s for s in found_originals.value.statuses if s is not None]
        known_originals.update((original.id, original) for original in read)
        late = _mentioned(read) - named - known_accounts.keys() - known_names.keys()
        # A repost stored before conversations names none (`Status.conversation_id`
        # stood in with its original's id): its original's, read just now, is asked
        # about now (one round trip more, for such a repost only).
        unasked = [
            o for o in read if o.muted is None and o.conversation_id not in asked
        ]
        late_muted = muted_queue(reads, unasked) if unasked else None
        if late:
            users = {**users, **users_queue(reads, uids=late).value}
    usernames = {uid: name for uid, name in known_names.items() if name is not None}
    usernames.update(
        (uid, found.user.username) for uid, found in known_accounts.items()
    )
    usernames.update((uid, user.username) for uid, user in users.items())
    return Related(
        filters=viewer_filters(reads),
        viewer=reads.proven_uid(),
        accounts=known_accounts,
        originals=known_originals,
        usernames=usernames,
        bookmarks=marked.value if marked is not None else frozenset(),
        pins=pinned.value if pinned is not None else frozenset(),
        muted=(muted.value if muted is not None else frozenset())
        | (late_muted.value if late_muted is not None else frozenset()),
    )


def statuses(found: Iterable[Status], related: Related, urls: Urls) -> list[dict]:
    """Status entities, newest first as given; a status whose author is gone (a
    deletion in progress) is left out."""
    accounts: dict[int, dict] = {}

    def author(uid: int) -> dict | None:
        if uid not in accounts:
            stats = related.accounts.get(uid)
            accounts[uid] = account(stats, urls) if stats is not None else None
        return accounts[uid]

    out = []
    for status in found:
        if status.likes is None and status.repost_of is None:
            # Read without its counts (from an outbox): as read by id, if it was
            # (its quote as checked with the row, where that read could not).
            read = related.originals.get(status.id, status)
            if read.quote is not None and read.quote_state is None:
                read = replace(read, quote_state=status.quote_state)
            status = read
        poster = author(status.author_id)
        if poster is None:
            continue
        if status.repost_of is None:
            out.append(_base_status(status, poster, related, urls))
            continue
        original = related.originals.get(status.repost_of)
        original_author = author(status.repost_uid or 0)
        if original is None or original_author is None:
            continue  # the original is gone: its repost goes with it
        if original.quote is not None and original.quote_state is None:
            # Read by id without the check: the repost's row carries the same
            # quote, checked for this viewer.
            original = replace(original, quote_state=status.quote_state)
        entity = _base_status(status, poster, related, urls)
        entity["reblog"] = _base_status(original, original_author, related, urls)
        entity["content"] = ""
        entity["spoiler_text"] = ""  # the reblog's own, as Mastodon's: none
        entity["edited_at"] = None  # likewise: a reblog is never edited
        entity["sensitive"] = False
        entity["mentions"] = []
        entity["tags"] = []
        entity["in_reply_to_id"] = entity["in_reply_to_account_id"] = None
        entity["reblogged"] = bool(original.reposted)
        entity["favourited"] = bool(original.liked)
        entity["bookmarked"] = entity["reblog"]["bookmarked"]
        entity["muted"] = entity["reblog"]["muted"]
        # Its original's poll (with its tally: the repost row has none), as
        # Mastodon's reblog carries its original's.
        entity["poll"] = entity["reblog"]["poll"]
        entity["quote"] = None  # the reblog's, as Mastodon's: its own is none
        out.append(entity)
    return out


def status(found: Status, related: Related, urls: Urls) -> dict | None:
    """One Status entity; None when its author (or a repost's original) is gone."""
    entities = statuses([found], related, urls)
    return entities[0] if entities else None


def accounts(
    found: Iterable[User | AccountStats], stats: dict[int, AccountStats], urls: Urls
) -> list[dict]:
    """Account entities of these users, in order (those whose stats were not
    found are left out)."""
    out = []
    for item in found:
        uid = item.user.id if isinstance(item, AccountStats) else item.id
        if uid in stats:
            out.append(account(stats[uid], urls))
    return out


def relationship(found: Relationship) -> dict:
    """A Relationship: what stands between the token's user and another (every key
    always there; what the site has no notion of, false or empty)."""
    return {
        "id": str(found.id),
        "following": found.following,
        # A follow (or a request) carries reposts: the site shows them all.
        "showing_reblogs": found.following or found.requested,
        "notifying": False,
        "languages": None,
        "followed_by": found.followed_by,
        "blocking": found.blocking,
        "blocked_by": found.blocked_by,
        "muting": found.muting,
        # A mute hides the muted's notifications too (`timeline.blocks`).
        "muting_notifications": found.muting,
        "requested": found.requested,
        "requested_by": found.requested_by,
        "domain_blocking": False,
        "endorsed": False,
        "note": "",
    }


def status_edits(
    status: Status, versions, author: dict, urls: Urls, living: set[int]
) -> list[dict]:
    """A status's versions as Mastodon's StatusEdit entities, oldest first (the
    current one last): each one's content, warning and time, and the author. Of
    the accounts a version names, only those `living` are linked (a deleted one's
    name may belong to someone else by now, as in a Status's `content`)."""
    shown = []
    for version in versions:
        then = replace(
            status,
            text=version.text,
            spoiler=version.spoiler,
            mentions=version.mentions,
        )
        kept = {name: uid for name, uid in version.mentions if uid in living}
        shown.append(
            {
                "content": _content(then, urls, kept),
                "spoiler_text": version.spoiler,
                "sensitive": bool(version.spoiler),
                "created_at": iso(version.at),
                "account": author,
                # A poll never changes (`timeline.polls`): each version shows it.
                "poll": {"options": [{"title": o} for o in status.poll.options]}
                if status.poll is not None
                else None,
                "media_attachments": [],
                "emojis": [],
            }
        )
    return shown


def scheduled_status(entry, *, locked: bool) -> dict:
    """A status waiting for its time (`timeline.scheduled.Scheduled`) as Mastodon's
    ScheduledStatus: its id, time and the parameters it will be posted with."""
    return {
        "id": str(entry.id),
        "scheduled_at": iso(entry.at),
        "params": {
            "text": entry.text,
            # Mastodon's keeps the poll's parameters as sent (`expires_in` a
            # string of seconds).
            "poll": {
                "options": list(entry.poll.options),
                "expires_in": str(int(entry.poll.expires)),
                "multiple": entry.poll.multiple,
                "hide_totals": entry.poll.hide_totals,
            }
            if entry.poll is not None
            else None,
            "media_ids": None,
            "sensitive": bool(entry.spoiler),
            "spoiler_text": entry.spoiler or None,
            "visibility": "private"
            if locked
            else "unlisted"
            if entry.unlisted
            else "public",
            "scheduled_at": None,
            "in_reply_to_id": str(entry.reply_to) if entry.reply_to else None,
            "application_id": None,
            "idempotency": None,
            "with_rate_limit": False,
            "language": None,
        },
        "media_attachments": [],
    }


def filter_entity(found: Filter, *, rules: bool = True) -> dict:
    """A keyword filter (`timeline.filters.Filter`) as Mastodon's Filter; without
    its keywords and statuses (`rules`) inside a FilterResult, as Mastodon's."""
    entity = {
        "id": str(found.id),
        "title": found.title,
        "context": list(found.context),
        "expires_at": iso(found.expires) if found.expires is not None else None,
        "filter_action": found.action,
    }
    if rules:
        entity["keywords"] = [filter_keyword(k) for k in found.keywords]
        entity["statuses"] = [filter_status(e) for e in found.statuses]
    return entity


def filter_keyword(keyword: FilterKeyword) -> dict:
    return {
        "id": str(keyword.id),
        "keyword": keyword.keyword,
        "whole_word": keyword.whole_word,
    }


def filter_status(entry: FilterStatusRow) -> dict:
    return {"id": str(entry.id), "status_id": str(entry.status_id)}


def filter_result(found: FilterMatch) -> dict:
    """A filter a status matched (Mastodon's FilterResult): the text a keyword
    matched, the filter's statuses it is (or reposts)."""
    return {
        "filter": filter_entity(found.filter, rules=False),
        "keyword_matches": list(found.keyword_matches)
        if found.keyword_matches
        else None,
        "status_matches": [str(sid) for sid in found.status_matches]
        if found.status_matches
        else None,
    }


def v1_filter(found: Filter, keyword: FilterKeyword) -> dict:
    """One keyword of a filter as the v1 API's Filter (Mastodon's V1::Filter: one
    per keyword, `irreversible` for a filter that hides)."""
    return {
        "id": str(keyword.id),
        "phrase": keyword.keyword,
        "context": list(found.context),
        "whole_word": keyword.whole_word,
        "expires_at": iso(found.expires) if found.expires is not None else None,
        "irreversible": found.action == "hide",
    }


def list_entity(found: List) -> dict:
    """Mastodon's List."""
    return {
        "id": str(found.id),
        "title": found.title,
        "replies_policy": found.replies_policy,
        "exclusive": found.exclusive,
    }
