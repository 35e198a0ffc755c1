"""Usernames -> user ids, remembered per process: the one cache on the read path.

Why: a profile or people page is addressed by name, and the name's id is needed
before the page's own reads can be queued. Remembering the id lets such a page send
its reads in the request's first round trip instead of a round trip later.

The invariant that makes it safe: an entry is only ever a *guess*. Every page that
uses a remembered id reads that user's hash in the same round trip and checks that
its username is the one asked for (`confirms`); when it is not (the store was
replaced, or the name now belongs to someone else), the page forgets the entry and
looks the name up afresh. So a stale entry costs one round trip, never a wrong page.
Nothing here writes to Redis.

Only a well-formed username (`USERNAME_RE`: ASCII) is ever remembered, answered or
confirmed: every other string is a miss, so the page takes the uncached path, which
refuses it too. Folding case with `str.lower()` is safe only on ASCII: it turns the
Kelvin sign (U+212A) into `k`, and would let "\u212aate" pass for "kate" once
"kate" was remembered.

Thread safety: `functools.lru_cache`-style bookkeeping under one lock; the cache is
bounded (`MAX_ENTRIES`, least recently used out first).
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from accounts.domain import USERNAME_RE

MAX_ENTRIES = 100_000

_ids: OrderedDict[str, int] = OrderedDict()
_lock = threading.Lock()


def _key(username: str) -> str | None:
    """The name as remembered (lowercase), or None for a string no user can hold."""
    return username.lower() if USERNAME_RE.match(username) else None


def remembered_id(username: str) -> int | None:
    """The id last seen for this name (any case), or None: a guess to confirm."""
    name = _key(username)
    if name is None:
        return None
    with _lock:
        uid = _ids.get(name)
        if uid is not None:
            _ids.move_to_end(name)
        return uid


def remember(username: str, uid: int) -> None:
    """Remember that this name belonged to this id when it was read."""
    name = _key(username)
    if name is None:
        return
    with _lock:
        _ids[name] = uid
        _ids.move_to_end(name)
        while len(_ids) > MAX_ENTRIES:
            _ids.popitem(last=False)


def forget(username: str) -> None:
    name = _key(username)
    if name is None:
        return
    with _lock:
        _ids.pop(name, None)


def confirms(user, username: str) -> bool:
    """Whether the user read from the store is the one this name asks for."""
    name = _key(username)
    return user is not None and name is not None and user.username.lower() == name
