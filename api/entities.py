"""Mastodon's entities (Account, Status, Relationship, Tag...) built from ours.

Plain functions that return dicts for orjson: ids as strings, times in ISO 8601,
every URL absolute, text as HTML (`timeline.richtext`, escaped). The shapes follow
Mastodon 4.3's documentation; what the site has no notion of (media, polls, custom
emoji, edits, bookmarks, pins) is there, empty or false, so clients parse them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from html import escape

from accounts.domain import User
from accounts.selectors import PageReads
from api.http import iso
from config.reverse import url_maker
from timeline import ids, richtext
from timeline.domain import AccountStats, Relationship, Status
from timeline.selectors import accounts_queue, statuses_by_id_queue


@dataclass(frozen=True, slots=True)
class Urls:
    """Absolute URLs for one response: `https://host` and the route reverser."""

    base: str
    url: object

    @classmethod
    def of(cls, request) -> Urls:
        return cls(base=f"{request.scheme}://{request.get_host()}", url=url_maker())

    def __call__(self, name: str, *args) -> str:
        return self.base + self.url(name, *args)


def _midnight(moment: float) -> str:
    """A day as Mastodon gives an account's `created_at`: midnight UTC."""
    day = datetime.fromtimestamp(moment, tz=UTC).date()
    return f"{day.isoformat()}T00:00:00.000Z"


def _note_html(bio: str) -> str:
    if not bio:
        return ""
    return "<p>" + escape(bio).replace("\n", "<br>") + "</p>"


def account(stats: AccountStats, urls: Urls, *, source: bool = False) -> dict:
    """An Account (a CredentialAccount, with `source`, for the token's own user)."""
    user = stats.user
    avatar = urls.base + user.avatar_url
    last = stats.last_status_id
    entity = {
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
        "url": urls("timeline:profile", user.username),
        "uri": urls("timeline:profile", user.username),
        "avatar": avatar,
        "avatar_static": avatar,
        "header": "",
        "header_static": "",
        "followers_count": stats.followers,
        "following_count": stats.following,
        "statuses_count": stats.statuses,
        "last_status_at": (
            datetime.fromtimestamp(ids.created_of(last), tz=UTC).date().isoformat()
            if last
            else None
        ),
        "hide_collections": False,
        "emojis": [],
        "fields": [],
        "roles": [],
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


def tag(name: str, urls: Urls, *, history: list | None = None) -> dict:
    """A Tag (name case folded, as the site keeps tags)."""
    return {
        "name": name,
        "url": urls("timeline:tag", name),
        "history": history or [],
        "following": False,
    }


def _content(status: Status, urls: Urls) -> str:
    html = richtext.to_html(status.text, dict(status.mentions), urls.base)
    return f"<p>{html}</p>"


def _mentions(status: Status, urls: Urls) -> list[dict]:
    shown: dict[int, str] = {}
    for name, uid in status.mentions:
        shown.setdefault(uid, name)
    return [
        {
            "id": str(uid),
            "username": name,
            "acct": name,
            "url": urls("timeline:profile", name),
        }
        for uid, name in shown.items()
    ]


def _base_status(status: Status, author: dict, urls: Urls) -> dict:
    likes = status.likes or 0
    return {
        "id": str(status.id),
        "uri": urls("timeline:status_detail", status.id),
        "url": urls("timeline:status_detail", status.id),
        "created_at": iso(status.created),
        "account": author,
        "content": _content(status, urls),
        "text": None,
        "visibility": "private" if author.get("locked") else "public",
        "sensitive": False,
        "spoiler_text": "",
        "media_attachments": [],
        "application": None,
        "mentions": _mentions(status, urls),
        "tags": [
            {"name": name, "url": urls("timeline:tag", name)}
            for name in richtext.hashtags(status.text)
        ],
        "emojis": [],
        "reblogs_count": status.reposts or 0,
        "favourites_count": likes,
        "replies_count": status.replies or 0,
        "in_reply_to_id": str(status.reply_to) if status.reply_to else None,
        "in_reply_to_account_id": str(status.reply_uid) if status.reply_uid else None,
        "reblog": None,
        "poll": None,
        "card": None,
        "language": None,
        "edited_at": None,
        "favourited": bool(status.liked),
        "reblogged": bool(status.reposted),
        "muted": False,
        "bookmarked": False,
        "pinned": False,
        "filtered": [],
    }


@dataclass(frozen=True, slots=True)
class Related:
    """What statuses' entities need beyond the statuses: their authors (with
    counts) and the originals of reposts (with counts and the viewer's state)."""

    accounts: dict[int, AccountStats]
    originals: dict[int, Status]


def related_get(reads: PageReads, statuses: Iterable[Status]) -> Related:
    """Read the authors and reposts' originals of these statuses: one round trip
    (none when there are no statuses)."""
    statuses = list(statuses)
    if not statuses:
        return Related(accounts={}, originals={})
    authors = set()
    originals = []
    for status in statuses:
        authors.add(status.author_id)
        if status.repost_of is not None:
            originals.append(status.repost_of)
            if status.repost_uid:
                authors.add(status.repost_uid)
    found_accounts = accounts_queue(reads, authors)
    found_originals = statuses_by_id_queue(reads, originals) if originals else None
    accounts = found_accounts.value
    originals_by_id = {}
    if found_originals is not None:
        for original in found_originals.value.statuses:
            if original is not None:
                originals_by_id[original.id] = original
    return Related(accounts=accounts, originals=originals_by_id)


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
        poster = author(status.author_id)
        if poster is None:
            continue
        if status.repost_of is None:
            out.append(_base_status(status, poster, urls))
            continue
        original = related.originals.get(status.repost_of)
        original_author = author(status.repost_uid or 0)
        if original is None or original_author is None:
            continue  # the original is gone: its repost goes with it
        entity = _base_status(status, poster, urls)
        entity["reblog"] = _base_status(original, original_author, urls)
        entity["content"] = ""
        entity["mentions"] = []
        entity["tags"] = []
        entity["in_reply_to_id"] = entity["in_reply_to_account_id"] = None
        entity["reblogged"] = bool(original.reposted)
        entity["favourited"] = bool(original.liked)
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
