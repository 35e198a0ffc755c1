"""Bookmarks: statuses a user saves for later (Twitter's and Mastodon's), seen by
nobody but them.

A bookmark is one entry of the user's own `bookmarks:{<uid>}` zset, member
`<sid>:<author uid>` (`bookmark_member`), scored by the time it was made: one
key in one slot, so making or undoing one is a single atomic step and nothing is
ever half-done. The author's id rides in the member so that the list reads its
statuses and whether the viewer may still see each author in one round trip
(`selectors.bookmarks_get`): a status whose author went private, blocked the
viewer or was blocked since, or that was deleted, is left out of the list rather
than shown. A status is bookmarked as a like is given: a repost's original, and
only while the user may see it (`social.status_target`).

The list is capped (BOOKMARKS_MAX): a bookmark past it is refused with a message,
none is dropped. A deleted status's entry is skipped on read; it goes when undone
(`status_unbookmark` finds it without its author), when a full list is asked for
one more (`_forget_deleted`: the list does not show it, so it could not be
undone), or with the account.
"""

from __future__ import annotations

import time

from accounts import limits
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis
from timeline import keys
from timeline.domain import BookmarksFull, NotFound, Status
from timeline.social import _valid, status_target

BOOKMARKS_MAX = 10_000


def bookmark_member(sid: int, author_id: int) -> str:
    """A bookmark's member in `bookmarks:{<uid>}`: the status's id and its author's."""
    return f"{sid}:{author_id}"


def member_read(member: str) -> tuple[int, int]:
    """A bookmark's (sid, author uid) from its member (`bookmark_member`)."""
    sid, _, author = member.partition(":")
    return int(sid), int(author or 0)


def status_member(status: Status) -> str:
    """The member a bookmark of this status (of a repost: its original) has."""
    if status.repost_of is not None:
        return bookmark_member(status.repost_of, status.repost_uid or 0)
    return bookmark_member(status.id, status.author_id)


# KEYS: the user's bookmarks. ARGV: the member, the time (microsecs), the cap.
# Adds the member unless there; refuses (-1) when the list holds the cap already.
# Returns 1 when added, 0 when it was there.
_BOOKMARK_ADD = LuaScript(
    """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""
)

# KEYS: the user's bookmarks. ARGV: the member, or (a status gone: its author is
# not known) '' and the status id. Removes the bookmark; 1 when there was one. The
# second form scans the members for the id: bounded by BOOKMARKS_MAX, and only
# for a bookmark whose status is gone.
_BOOKMARK_REMOVE = LuaScript(
    """
if ARGV[1] ~= '' then return redis.call('ZREM', KEYS[1], ARGV[1]) end
local cursor, prefix, removed = '0', ARGV[2] .. ':', 0
repeat
  local reply = redis.call(
    'ZSCAN', KEYS[1], cursor, 'MATCH', prefix .. '*', 'COUNT', 1000)
  cursor = reply[1]
  for i = 1, #reply[2], 2 do
    if string.sub(reply[2][i], 1, #prefix) == prefix then
      removed = removed + redis.call('ZREM', KEYS[1], reply[2][i])
    end
  end
until cursor == '0'
return removed
"""
)


def status_bookmark(*, user: User, sid: int, limit: limits.Limit | None = None) -> bool:
    """Bookmark a status (a repost's original); False if already bookmarked.
    NotFound when it is gone or the user may not see it; BookmarksFull past
    BOOKMARKS_MAX; with `limit` (`limits.like`), taken first or refused with
    TooManyAttempts."""
    if limit is not None:
        limits.take(limit)
    target = status_target(user=user, sid=sid)

    def add() -> int:
        return _BOOKMARK_ADD(
            keys=[keys.bookmarks(user.id)],
            args=[
                bookmark_member(target.id, target.author_id),
                time.time_ns() // 1000,
                BOOKMARKS_MAX,
            ],
        )

    added = add()
    if added < 0 and _forget_deleted(user.id):
        added = add()
    if added < 0:
        raise BookmarksFull(
            f"You have {BOOKMARKS_MAX:,} bookmarks, the most one can keep. "
            "Remove some first."
        )
    return added == 1


def _forget_deleted(uid: int) -> int:
    """Remove the user's bookmarks of statuses deleted since, which the list does
    not show and so cannot be undone there (a full list's, before it refuses one
    more); how many. Their statuses are asked about in one round trip."""
    r = get_redis()
    members = r.zrange(keys.bookmarks(uid), 0, -1)
    sids = [member_read(m)[0] for m in members]
    found = pipeline_run(
        lambda pipe: [pipe.exists(keys.status(sid)) for sid in sids], confirm=False
    )
    gone = [m for m, exists in zip(members, found, strict=True) if not exists]
    return r.zrem(keys.bookmarks(uid), *gone) if gone else 0


def status_unbookmark(
    *, user: User, sid: int, limit: limits.Limit | None = None
) -> bool:
    """Undo a bookmark (of a repost's original, as made); False if there was none.
    A status gone, or hidden from the user since, can be unbookmarked too."""
    if limit is not None:
        limits.take(limit)
    if not _valid(sid):
        raise NotFound(sid)
    r = get_redis()
    uid, original, original_uid = r.hmget(
        keys.status(sid), ["uid", "repost_of", "repost_uid"]
    )
    if original:
        args = [bookmark_member(int(original), int(original_uid or 0))]
    elif uid is not None:
        args = [bookmark_member(sid, int(uid))]
    else:
        args = ["", sid]
    return bool(_BOOKMARK_REMOVE(keys=[keys.bookmarks(user.id)], args=args))
