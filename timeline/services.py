"""Writes for statuses, follows and timelines: post, delete, follow, unfollow, fan-out.

Steps that span users are single-slot steps, each idempotent, ordered so that a
crash between two of them never shows a visitor something half-made:

- post: the status hash first (unreachable), then the author's `posts` zset (now it
  exists), then fan-out to homes and the global timeline;
- delete: the hash first (every reference to it stops rendering at once), then the
  references;
- follow/unfollow: the follower's `following` zset is the truth; the followee's
  `followers` zset and the follower's home follow it, under a per-user lock.

A timeline add is conditional, atomically in the reader's own slot: a status lands in
`home:{f}` only while `following:{f}` still holds its author. So a fan-out racing an
unfollow can never leave the unfollowed author's post behind.
"""

from __future__ import annotations

import secrets
import time
from collections.abc import Iterable

from django.conf import settings
from redis.crc import key_slot

from accounts.domain import User
from config.redis import LuaScript, get_redis
from timeline import keys
from timeline.domain import (
    Busy,
    CannotFollowSelf,
    Forbidden,
    InvalidStatus,
    NotFound,
    Status,
)

# KEYS: (home, following) of one or more readers. ARGV: author uid, cap, the author's
# own home key, sid... Adds the statuses to each home whose owner is the author or
# still follows the author, then trims it to the cap. One reader's check-and-add is
# atomic in that reader's slot; a call carries several readers only where they share
# a slot (Cluster) or the server is a single node.
_TIMELINE_ADD = LuaScript(
    """
local author, cap, own = ARGV[1], tonumber(ARGV[2]), ARGV[3]
local added = 0
for i = 1, #KEYS, 2 do
  local home = KEYS[i]
  if home == own or redis.call('ZSCORE', KEYS[i + 1], author) then
    for j = 4, #ARGV do
      added = added + redis.call('ZADD', home, ARGV[j], ARGV[j])
    end
    if redis.call('ZCARD', home) > cap then
      redis.call('ZREMRANGEBYRANK', home, 0, -(cap + 1))
    end
  end
end
return added
"""
)

# KEYS: one lock. ARGV: its token. Release only a lock we still own.
_UNLOCK = LuaScript(
    """
if redis.call('GET', KEYS[1]) == ARGV[1] then
  return redis.call('DEL', KEYS[1])
end
return 0
"""
)


def normalize_text(text: str) -> str:
    """The text as stored: Unix line breaks, no surrounding blanks."""
    return text.replace("\r\n", "\n").replace("\r", "\n").strip()


def status_create(*, author: User, text: str) -> Status:
    """Post a status: store it once, then fan it out to every follower's home."""
    text = normalize_text(text)
    if not text:
        raise InvalidStatus("Write something first.")
    if len(text) > settings.STATUS_MAX_LENGTH:
        raise InvalidStatus(
            f"A status is at most {settings.STATUS_MAX_LENGTH} characters "
            f"(this one has {len(text)})."
        )
    r = get_redis()
    sid = int(r.incr(keys.status_ids()))
    created = round(time.time(), 3)
    pipe = r.pipeline(transaction=False)
    pipe.hset(
        keys.status(sid),
        mapping={
            "uid": author.id,
            "author": author.username,
            "text": text,
            "created": f"{created:.3f}",
        },
    )
    pipe.zadd(keys.posts(author.id), {sid: sid})
    pipe.execute()
    status_fanout(author_id=author.id, sid=sid)
    return Status(
        id=sid, author_id=author.id, author=author.username, text=text, created=created
    )


def status_fanout(*, author_id: int, sid: int) -> int:
    """Add a status to the global timeline and the homes of the author and followers.

    Idempotent: running it again (say, after an interrupted post) adds nothing twice.
    Followers are read and written in batches of FANOUT_BATCH, one pipeline each.
    Returns the number of homes written to.
    """
    r = get_redis()
    cap_global = settings.GLOBAL_TIMELINE_CAP
    pipe = r.pipeline(transaction=False)
    pipe.zadd(keys.global_timeline(), {sid: sid})
    pipe.zremrangebyrank(keys.global_timeline(), 0, -(cap_global + 1))
    _timeline_add(pipe, readers=[author_id], author_id=author_id, sids=[sid])
    pipe.execute()
    homes = 1
    for batch in _follower_batches(author_id):
        pipe = r.pipeline(transaction=False)
        for group in _reader_groups(batch):
            _timeline_add(pipe, readers=group, author_id=author_id, sids=[sid])
        pipe.execute()
        homes += len(batch)
    return homes


def _reader_groups(readers: list[int]) -> list[list[int]]:
    """Split readers into script calls: one hash slot per call on Redis Cluster,
    FANOUT_GROUP readers per call on a single server."""
    if settings.REDIS_CLUSTER:
        by_slot: dict[int, list[int]] = {}
        for reader in readers:
            by_slot.setdefault(key_slot(keys.home(reader).encode()), []).append(reader)
        return list(by_slot.values())
    size = settings.FANOUT_GROUP
    return [readers[i : i + size] for i in range(0, len(readers), size)]


def _follower_batches(uid: int) -> Iterable[list[int]]:
    """The user's followers, about FANOUT_BATCH at a time.

    ZSCAN returns every follower present for the whole scan even while others follow
    or unfollow (a rank range would skip one when an earlier entry left); a follower
    seen twice is written twice, which the idempotent add makes harmless.
    """
    size = settings.FANOUT_BATCH
    batch: list[int] = []
    for member, _score in get_redis().zscan_iter(keys.followers(uid), count=size):
        batch.append(int(member))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _timeline_add(pipe, *, readers: list[int], author_id: int, sids: list[int]) -> None:
    _TIMELINE_ADD(
        keys=[
            k for reader in readers for k in (keys.home(reader), keys.following(reader))
        ],
        args=[author_id, settings.HOME_TIMELINE_CAP, keys.home(author_id), *sids],
        client=pipe,
    )


def status_delete(*, user: User, sid: int) -> None:
    """Delete a status of the user's own: gone from every timeline and page at once."""
    r = get_redis()
    owner = r.hget(keys.status(sid), "uid")
    if owner is None:
        raise NotFound(sid)
    if int(owner) != user.id:
        raise Forbidden("Only its author can delete a status.")
    # The hash goes first: from then on every stale reference is skipped on render.
    pipe = r.pipeline(transaction=False)
    pipe.delete(keys.status(sid))
    pipe.zrem(keys.posts(user.id), sid)
    pipe.zrem(keys.global_timeline(), sid)
    pipe.zrem(keys.home(user.id), sid)
    pipe.execute()
    for batch in _follower_batches(user.id):
        pipe = r.pipeline(transaction=False)
        for follower in batch:
            pipe.zrem(keys.home(follower), sid)
        pipe.execute()


class _FollowLock:
    """Serialize one user's follow changes (a few ms each) with a token-owned lock."""

    def __init__(self, uid: int, *, wait: float = 3.0, ttl_ms: int = 10_000):
        self.key = keys.follow_lock(uid)
        self.token = secrets.token_hex(16)
        self.wait = wait
        self.ttl_ms = ttl_ms

    def __enter__(self):
        r = get_redis()
        deadline = time.monotonic() + self.wait
        while not r.set(self.key, self.token, nx=True, px=self.ttl_ms):
            if time.monotonic() > deadline:
                raise Busy("Another follow change is in progress. Try again.")
            time.sleep(0.005)
        return self

    def __exit__(self, *exc):
        _UNLOCK(keys=[self.key], args=[self.token])


def follow_create(*, follower: User, followee_id: int) -> bool:
    """Follow a user and backfill their newest statuses; False if already following.

    Safe to repeat: a second call completes whatever a first one left undone.
    """
    if follower.id == followee_id:
        raise CannotFollowSelf()
    r = get_redis()
    now_us = time.time_ns() // 1000
    with _FollowLock(follower.id):
        added = r.zadd(keys.following(follower.id), {followee_id: now_us}, nx=True)
        r.zadd(keys.followers(followee_id), {follower.id: now_us}, nx=True)
        _popularity_update(followee_id)
        newest = r.zrevrange(keys.posts(followee_id), 0, settings.FOLLOW_BACKFILL - 1)
        if newest:
            _timeline_add(
                r,
                readers=[follower.id],
                author_id=followee_id,
                sids=[int(s) for s in newest],
            )
    return bool(added)


def follow_delete(*, follower: User, followee_id: int) -> bool:
    """Unfollow a user and drop their statuses from the home; False if not following."""
    r = get_redis()
    with _FollowLock(follower.id):
        removed = r.zrem(keys.following(follower.id), followee_id)
        r.zrem(keys.followers(followee_id), follower.id)
        _popularity_update(followee_id)
        # From here no fan-out can add the followee's statuses to this home (the add
        # checks `following` atomically), so one sweep removes them for good.
        oldest = r.zrange(keys.home(follower.id), 0, 0, withscores=True)
        if oldest:
            theirs = r.zrangebyscore(keys.posts(followee_id), oldest[0][1], "+inf")
            for start in range(0, len(theirs), 1000):
                r.zrem(keys.home(follower.id), *theirs[start : start + 1000])
    return bool(removed)


POPULAR_CAP = 100


def _popularity_update(uid: int) -> None:
    """Record the user's true follower count in the capped popularity ranking.

    Setting the count read from ZCARD (not incrementing) makes the step idempotent
    and self-correcting: a count written stale by a race is fixed by the next follow.
    """
    r = get_redis()
    count = r.zcard(keys.followers(uid))
    pipe = r.pipeline(transaction=False)
    if count:
        pipe.zadd(keys.popular_users(), {uid: count})
        pipe.zremrangebyrank(keys.popular_users(), 0, -(POPULAR_CAP + 1))
    else:
        pipe.zrem(keys.popular_users(), uid)
    pipe.execute()
