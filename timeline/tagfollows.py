"""Followed hashtags (Mastodon's): a user follows `#tag`, and their home shows the
tag's public statuses beside those of the people they follow.

**Stored in the follower's slot, changed in one step.** The tags a user follows are
one zset, `followed_tags:{<uid>}`: the tag as its timeline is filed (case folded,
`richtext.tag_key`, so `#Django` and `#django` are one) -> when it was followed
(microsecs). A follow is one script that checks the cap (FOLLOWED_TAGS_MAX, a
setting: each tag is one more timeline merged into every home page) as it adds, so
nothing is checked then set; an unfollow is one ZREM. The account's deletion
deletes the key (`timeline.fanout._account_keys`).

**Merged at read, not fanned out.** Nothing is written to the home: a home page
reads the followed tags' timelines (`tag:{t:<tag>}`, the public statuses carrying
the tag, TAG_TIMELINE_CAP newest) with the home itself and merges them by id
(`timeline.selectors._home_read`): on one server in the window's one script, so the
home still costs one round trip; on a Cluster, where the tags' timelines live in
other slots, in one more. So a follow shows the tag's newest statuses at once, an
unfollow takes them out at once, and no job is needed either way; the home's rules
(blocks, mutes, keyword filters, reposts once) apply to them as to the rest.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass

from django.conf import settings

from accounts import limits
from accounts.selectors import PageReads
from config.pipelines import Deferred, LuaScript, ReadBatch
from config.redis import get_redis
from timeline import keys, richtext
from timeline.domain import NotFound, Refused


class TagFollowRefused(Refused):
    """A tag follow refused: the user follows FOLLOWED_TAGS_MAX tags already."""


@dataclass(frozen=True, slots=True)
class FollowedTag:
    """A tag the user follows (case folded, as its timeline is filed), and when
    they followed it (microsecs)."""

    name: str
    since: int


# KEYS: the user's followed tags. ARGV: the tag, the time (microsecs), the cap.
# Returns 1 when followed, 0 when it was already (its time kept), -1 past the cap.
_FOLLOW = LuaScript(
    """
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then return 0 end
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[3]) then return -1 end
redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
return 1
"""
)


def tag_name(tag: str) -> str:
    """The tag as followed and filed (case folded), from a tag as written or as
    stored, with or without its `#`; NotFound when it cannot be a tag."""
    wanted = richtext.tag_wanted(tag.removeprefix("#"))
    if wanted is None:
        raise NotFound(tag)
    return wanted


def tag_follow(*, uid: int, tag: str, limit: limits.Limit | None = None) -> str:
    """Follow a tag: its public statuses show in the user's home from now on (its
    newest ones at once). Returns the tag as followed (case folded); a tag followed
    already stays as it was. NotFound: not a tag; TagFollowRefused: past
    FOLLOWED_TAGS_MAX; with `limit` (`limits.follow`), taken first or refused with
    TooManyAttempts."""
    name = tag_name(tag)
    if limit is not None:
        limits.take(limit)
    cap = settings.FOLLOWED_TAGS_MAX
    done = _FOLLOW(
        keys=[keys.followed_tags(uid)], args=[name, time.time_ns() // 1000, cap]
    )
    if done == -1:
        raise TagFollowRefused(
            f"You follow {cap} hashtags, the most one can. Unfollow one first."
        )
    return name


def tag_unfollow(*, uid: int, tag: str, limit: limits.Limit | None = None) -> str:
    """Unfollow a tag (one not followed: nothing); returns the tag as followed."""
    name = tag_name(tag)
    if limit is not None:
        limits.take(limit)
    get_redis().zrem(keys.followed_tags(uid), name)
    return name


# Reads (in the request's batch; trusted once the viewer is proven).


def _followed(replies: list) -> list[FollowedTag]:
    return [FollowedTag(name=name, since=int(score)) for name, score in replies[0]]


def followed_tags_queue(reads: ReadBatch, uid: int) -> Deferred[list[FollowedTag]]:
    """Queue the read of every tag user `uid` follows, the newest follow first (at
    most FOLLOWED_TAGS_MAX: one command)."""
    return reads.queue(
        lambda pipe: pipe.zrevrange(keys.followed_tags(uid), 0, -1, withscores=True),
        _followed,
    )


def tag_followed_queue(reads: ReadBatch, uid: int, tag: str) -> Deferred[bool]:
    """Queue the read of whether user `uid` follows `tag` (as filed)."""
    return reads.queue(
        lambda pipe: pipe.zscore(keys.followed_tags(uid), tag),
        lambda replies: replies[0] is not None,
    )


def followed_tags_get(*, reads: PageReads) -> list[FollowedTag] | None:
    """The tags the viewer follows, newest follow first, read with the auth check
    (one round trip); None when the request proves no viewer."""
    if reads.claimed_uid is None:
        return None
    uid = reads.claimed_uid
    found = followed_tags_queue(reads, uid)
    if reads.proven_uid() != uid:
        return None
    return found.value


def viewer_follows_queue(reads: PageReads, tag: str) -> Callable[[], bool]:
    """Queue the read of whether the claimed viewer follows `tag` (as filed); the
    function answers it once the viewer is proven (False for a visitor)."""
    uid = reads.claimed_uid
    if uid is None:
        return lambda: False
    found = tag_followed_queue(reads, uid, tag)
    return lambda: reads.proven_uid() == uid and found.value
