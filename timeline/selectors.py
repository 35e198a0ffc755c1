"""Reads of statuses, timelines and the follow graph.

A page costs a fixed number of round trips whatever its length: the first pipeline
checks the viewer's credentials together with the page's own reads (all in the
viewer's or the page owner's slot), the second fetches the statuses' hashes. Every
Redis hash becomes a `Status` in `_status()` only.
"""

from __future__ import annotations

from django.conf import settings

from accounts.domain import AnonymousUser, Credentials, User
from accounts.selectors import (
    epoch_queue,
    remember_users,
    remembered_uid,
    remembered_usernames,
    remembered_valid,
    user_id_by_username,
    users_queue,
    viewer_queue,
)
from config.redis import Batch, Deferred, LuaScript, get_redis
from timeline import keys
from timeline.domain import MAX_STATUS_ID, Page, PeoplePage, Profile, Status

STATUS_FIELDS = ("uid", "author", "text", "created")
IN_COMMON_SHOWN = 3


def _status(sid: int, values: list[str | None]) -> Status | None:
    uid, author, text, created = values
    if uid is None or text is None:
        return None
    return Status(
        id=sid,
        author_id=int(uid),
        author=author or "",
        text=text,
        created=float(created or 0),
    )


def _ids_queue(batch: Batch, key: str, max_id: int | None, size: int) -> Deferred:
    top = max_id if max_id is not None else "+inf"

    def build(pipe):
        pipe.zrevrangebyscore(key, top, "-inf", start=0, num=size + 1)

    return batch.queue(build, lambda replies: [int(sid) for sid in replies[0]])


# Read many status hashes in one command: redis-py's cost per pipelined command was
# about a fifth of a page's time (docs/BENCHMARKS.md). A script may only touch keys of
# one slot on Redis Cluster, so there (REDIS_CLUSTER) each hash is an HMGET of its own.
_STATUSES_READ = LuaScript(
    """
local out = {}
for i, key in ipairs(KEYS) do
  out[i] = redis.call('HMGET', key, 'uid', 'author', 'text', 'created')
end
return out
"""
)


def _statuses_queue(batch: Batch, sids: list[int]) -> Deferred:
    if sids and not settings.REDIS_CLUSTER:
        return batch.queue(
            lambda pipe: _STATUSES_READ.queue(
                pipe, keys=[keys.status(sid) for sid in sids], args=[]
            ),
            lambda replies: [
                _status(sid, values)
                for sid, values in zip(sids, replies[0], strict=True)
            ],
        )

    def build(pipe):
        for sid in sids:
            pipe.hmget(keys.status(sid), STATUS_FIELDS)

    def parse(replies):
        return [_status(sid, values) for sid, values in zip(sids, replies, strict=True)]

    return batch.queue(build, parse)


def _page(key: str, ids: list[int], found: list[Status | None], size: int) -> Page:
    """Cut a page from ids read one past its size; drop (and sweep) deleted ones."""
    more = len(ids) > size
    shown = ids[:size]
    stale = [sid for sid, status in zip(ids, found, strict=True) if status is None]
    if stale:
        # A status deleted while a fan-out still carried it: remove the reference.
        get_redis().zrem(key, *stale)
    statuses = [s for s in found[: len(shown)] if s is not None]
    return Page(statuses=statuses, next_max_id=shown[-1] - 1 if more else None)


def _timeline(
    *,
    credentials: Credentials | None,
    key: str,
    max_id: int | None,
) -> tuple[User | AnonymousUser, Page]:
    size = settings.TIMELINE_PAGE_SIZE
    first = Batch()
    viewer = viewer_queue(first, credentials=credentials)
    ids = _ids_queue(first, key, max_id, size)
    first.execute()
    second = Batch()
    found = _statuses_queue(second, ids.value)
    second.execute()
    return viewer.value, _page(key, ids.value, found.value, size)


def home_page(
    *, credentials: Credentials, max_id: int | None = None
) -> tuple[User | AnonymousUser, Page | None]:
    """The viewer and their home timeline: two round trips, the first with the auth.

    The home key comes from the (unchecked) cookie, but its contents are returned
    only when the same round trip proved the credentials.
    """
    viewer, page = _timeline(
        credentials=credentials, key=keys.home(credentials.uid), max_id=max_id
    )
    return viewer, page if viewer.is_authenticated else None


def global_page(
    *, credentials: Credentials | None, max_id: int | None = None
) -> tuple[User | AnonymousUser, Page]:
    """The viewer and everyone's newest statuses."""
    return _timeline(credentials=credentials, key=keys.global_timeline(), max_id=max_id)


def status_get(
    *, credentials: Credentials | None, sid: int
) -> tuple[User | AnonymousUser, Status | None]:
    """The viewer and one status (None if there is no such status): one round trip."""
    batch = Batch()
    viewer = viewer_queue(batch, credentials=credentials)
    found = _statuses_queue(batch, [sid] if 0 < sid < MAX_STATUS_ID else [])
    batch.execute()
    return viewer.value, (found.value[0] if found.value else None)


def _profile_uid(username: str, *, fresh: bool) -> tuple[int | None, bool]:
    """The id of a username and whether it came from the process's memory."""
    if not fresh:
        uid = remembered_uid(username)
        if uid is not None:
            return uid, True
    return user_id_by_username(username=username), False


def _is_owner(owner: User | None, username: str) -> bool:
    return owner is not None and owner.username.lower() == username.lower()


def profile_get(
    *,
    credentials: Credentials | None,
    username: str,
    max_id: int | None = None,
    fresh: bool = False,
) -> tuple[User | AnonymousUser, Profile | None]:
    """The viewer and a profile: counts, statuses, follow state, people in common.

    Two round trips once this process knows the name (and the names of the people in
    common); a name seen for the first time costs one more, and so do people in
    common whose names it has not seen yet.
    """
    uid, remembered = _profile_uid(username, fresh=fresh)
    if uid is None:
        return _viewer_only(credentials), None
    size = settings.TIMELINE_PAGE_SIZE
    first = Batch()
    epoch_d = epoch_queue(first)
    viewer_d = viewer_queue(first, credentials=credentials)
    owner_d = users_queue(first, uids=[uid])

    def counts_build(pipe):
        pipe.zcard(keys.posts(uid))
        pipe.zcard(keys.followers(uid))
        pipe.zcard(keys.following(uid))

    counts_d = first.queue(counts_build, lambda replies: replies)
    ids_d = _ids_queue(first, keys.posts(uid), max_id, size)
    vid = credentials.uid if credentials is not None else None
    relation_d = None
    if vid is not None and vid != uid:

        def relation_build(pipe):
            pipe.zscore(keys.following(vid), uid)
            pipe.zrevrange(keys.following(vid), 0, -1)

        relation_d = first.queue(relation_build, lambda replies: replies)
    first.execute()

    memory_valid = remembered_valid(epoch_d.value)
    viewer = viewer_d.value
    owner = owner_d.value.get(uid)
    if not _is_owner(owner, username):
        if remembered:  # remembered from another store: look the name up afresh
            return profile_get(
                credentials=credentials, username=username, max_id=max_id, fresh=True
            )
        return viewer, None
    remember_users([owner, *([viewer] if viewer.is_authenticated else [])])

    follows, followed = False, []
    if relation_d is not None and viewer.is_authenticated:
        score, followed = relation_d.value
        follows = score is not None
    second = Batch()
    found_d = _statuses_queue(second, ids_d.value)
    common_d = None
    if followed:
        members = [int(m) for m in followed]
        common_d = second.queue(
            lambda pipe: pipe.zmscore(keys.followers(uid), members),
            lambda replies: [
                m for m, s in zip(members, replies[0], strict=True) if s is not None
            ],
        )
    second.execute()

    in_common_ids = common_d.value if common_d is not None else []
    shown_ids = in_common_ids[:IN_COMMON_SHOWN]
    names = remembered_usernames(shown_ids) if memory_valid else {}
    missing = [i for i in shown_ids if i not in names]
    if missing:
        third = Batch()
        users_d = users_queue(third, uids=missing)
        third.execute()
        remember_users(users_d.value.values())
        names.update({i: u.username for i, u in users_d.value.items()})
    statuses, followers, following = counts_d.value
    return viewer, Profile(
        user=owner,
        statuses=int(statuses),
        followers=int(followers),
        following=int(following),
        viewer_follows=follows,
        in_common=[
            User(id=i, username=names[i], created=0) for i in shown_ids if i in names
        ],
        in_common_count=len(in_common_ids),
        page=_page(keys.posts(uid), ids_d.value, found_d.value, size),
    )


def _viewer_only(credentials: Credentials | None) -> User | AnonymousUser:
    batch = Batch()
    viewer = viewer_queue(batch, credentials=credentials)
    batch.execute()
    return viewer.value


def people_page(
    *,
    credentials: Credentials | None,
    username: str,
    relation: str,
    cursor: int | None = None,
    fresh: bool = False,
) -> tuple[User | AnonymousUser, User | None, PeoplePage | None]:
    """The viewer, a user, and a page of their followers or followees, newest first.

    The cursor is the follow time (microseconds) below which the next page starts.
    """
    key_of = {"followers": keys.followers, "following": keys.following}[relation]
    uid, remembered = _profile_uid(username, fresh=fresh)
    if uid is None:
        return _viewer_only(credentials), None, None
    size = settings.TIMELINE_PAGE_SIZE
    first = Batch()
    epoch_d = epoch_queue(first)
    viewer_d = viewer_queue(first, credentials=credentials)
    owner_d = users_queue(first, uids=[uid])
    top = cursor if cursor is not None else "+inf"
    rows_d = first.queue(
        lambda pipe: pipe.zrevrangebyscore(
            key_of(uid), top, "-inf", start=0, num=size + 1, withscores=True
        ),
        lambda replies: [(int(m), int(s)) for m, s in replies[0]],
    )
    first.execute()
    remembered_valid(epoch_d.value)
    owner = owner_d.value.get(uid)
    if not _is_owner(owner, username):
        if remembered:
            return people_page(
                credentials=credentials,
                username=username,
                relation=relation,
                cursor=cursor,
                fresh=True,
            )
        return viewer_d.value, None, None
    rows = rows_d.value
    shown = rows[:size]
    second = Batch()
    users_d = users_queue(second, uids=[m for m, _ in shown])
    second.execute()
    users = [users_d.value[m] for m, _ in shown if m in users_d.value]
    remember_users([owner, *users])
    next_cursor = shown[-1][1] - 1 if len(rows) > size else None
    return viewer_d.value, owner, PeoplePage(users=users, next_cursor=next_cursor)


def suggestions_get(*, viewer_id: int, limit: int = 5) -> list[User]:
    """The most followed people the viewer does not follow yet (for an empty home)."""
    r = get_redis()
    candidates = [int(u) for u in r.zrevrange(keys.popular_users(), 0, 4 * limit)]
    candidates = [u for u in candidates if u != viewer_id]
    if not candidates:
        return []
    batch = Batch()
    followed_d = batch.queue(
        lambda pipe: pipe.zmscore(keys.following(viewer_id), candidates),
        lambda replies: replies[0],
    )
    users_d = users_queue(batch, uids=candidates)
    batch.execute()
    fresh = [u for u, s in zip(candidates, followed_d.value, strict=True) if s is None]
    return [users_d.value[u] for u in fresh if u in users_d.value][:limit]
