"""OAuth scopes as Mastodon names them: what a token may do.

A token's scopes are those its app registered and the authorization asked for (a
subset). An endpoint needs one sub-scope (`read:statuses`); a token has it when it
holds the sub-scope itself or its top-level scope (`read`), and for the follow graph
also the old `follow` scope, which Mastodon still grants as those sub-scopes.
"""

from __future__ import annotations

READ = (
    "read:accounts",
    "read:blocks",
    "read:bookmarks",
    "read:favourites",
    "read:filters",
    "read:follows",
    "read:lists",
    "read:mutes",
    "read:notifications",
    "read:search",
    "read:statuses",
)
WRITE = (
    "write:accounts",
    "write:blocks",
    "write:bookmarks",
    "write:conversations",
    "write:favourites",
    "write:filters",
    "write:follows",
    "write:lists",
    "write:media",
    "write:mutes",
    "write:notifications",
    "write:reports",
    "write:statuses",
)
FOLLOW = (
    "read:blocks",
    "write:blocks",
    "read:follows",
    "write:follows",
    "read:mutes",
    "write:mutes",
)
TOP = ("read", "write", "follow", "push", "profile")
# Every scope a client may ask for (the authorization server's metadata lists them).
ALL = TOP + READ + WRITE
KNOWN = frozenset(ALL)
DEFAULT = ("read",)


def parse(text: str | None) -> tuple[str, ...] | None:
    """Scopes from a space-separated string (`+` and commas too, as some clients
    send); () for empty; None when one of them is unknown."""
    words = (text or "").replace("+", " ").replace(",", " ").split()
    if any(word not in KNOWN for word in words):
        return None
    return tuple(dict.fromkeys(words))


def within(asked: tuple[str, ...], registered: tuple[str, ...]) -> bool:
    """Whether every scope asked for is one the app registered (or under one)."""
    return all(allows(registered, scope) for scope in asked)


def allows(granted: tuple[str, ...], needed: str) -> bool:
    """Whether scopes `granted` include `needed`."""
    if needed in granted:
        return True
    top = needed.partition(":")[0]
    if top in granted and top != needed:
        return True
    return "follow" in granted and needed in FOLLOW


_TOP_WORDS = {
    "read": "read all of your account's data: timelines, statuses, follows, "
    "notifications, blocks and mutes",
    "write": "post and delete statuses, like and repost, follow, block and mute "
    "people, and change your profile",
    "follow": "follow, unfollow, block and mute people, and see whom you follow, "
    "block and mute",
    "push": "receive push notifications (this site sends none yet)",
    "profile": "see your profile (name and avatar), nothing else",
}
_THINGS = {"accounts": "account details", "favourites": "likes", "search": "search"}


def words(scope: str) -> str:
    """What a scope lets an app do, as the authorization page says it."""
    if scope in _TOP_WORDS:
        return _TOP_WORDS[scope]
    top, _, thing = scope.partition(":")
    thing = _THINGS.get(thing, thing.replace("_", " "))
    if top == "read":
        return "search for you" if thing == "search" else f"read your {thing}"
    return f"change your {thing}"
