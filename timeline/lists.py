"""Lists (Mastodon's): a user's named groups of the people they follow, each read as
a timeline of its own (`timeline.selectors.list_page`, `list_window`).

**Stored in the owner's slot, changed in one step.** A user's lists are one hash,
`lists:{<uid>}`: `<lid>` -> a list's own fields (JSON: title, replies policy,
exclusive), `next` -> the last id given (kept when a list goes, so an id is never
given twice). Who is on which list is one zset, `list_members:{<uid>}`, of
`<lid>:<member uid>`, all scored 0 so that one list's members are a lex range
(`[<lid>:` to `(<lid>;`: `;` follows `:`), with no time: a list is ordered by
account, as Mastodon pages its accounts. Every change is one script (`_WRITE`) in
the owner's slot, beside `following:{<uid>}`: it checks that the list still exists,
that each member added is followed (Mastodon's "You must follow this account"),
and the caps (LISTS_MAX lists; MEMBERSHIPS_MAX memberships in all, LIST_MEMBERS_MAX
on one list, which is what a list's timeline reads), then writes.

**Members are people the owner follows.** An unfollow, or a block either way,
ends the follow first; its last step (`services._follow_sync`, which every
unfollow, block and follow job runs) then takes the person off the owner's lists
(`forget_queue`: one script, idempotent, a no-op if they are followed again). A
step cut short (a crash between the two) leaves the entries behind, and nothing
shows them: every read of a list checks each member against `following` in the same
script (`_READ`), so a member no longer followed is neither listed nor read; the
follow job, which completes an unfollow that died midway, runs the step again, and
an add that finds the list full first drops such entries. A deleted account's
entries in others' lists stay (their follows end in their followers' slots, not
through `_follow_sync`) and are never shown; the owner's deletion deletes both keys.

**`exclusive` is applied when statuses reach the home, as mutes are.** Mastodon
leaves an exclusive list's members' statuses (their reposts too: it goes by whose
status it is, so another's repost of a member's status stays) out of its owner's
home when its fan-out inserts them (`FeedManager#filter_from_home`); so here. Every
change of the lists (`_WRITE`, the one script) also rewrites, in the same step, the
derived `list_exclusive:{<uid>}`: who is on any exclusive list of the owner's,
exactly, and on one server the owner's bit in `muters` ("has home skips": mutes or
exclusive members). Every writer of a home checks it in the reader's slot as it
checks `mutes` (`services.HOME_ADD_LUA`: the fan-out, follow backfills, a returning
reader's rebuild, an unmute's backfill; the one-server push reads it only where the
`muters` bit is set), so a busy member takes none of the home's cap
(HOME_TIMELINE_CAP) nor its reposts' falloff. After the change, `_home_sync` sweeps
the statuses of those who came onto the set out of the home (as `mute_create`: the
home read after the change holds, its ids asked of each one's `posts`, removed only
while they are still on it) and brings back the newest FOLLOW_BACKFILL of those who
left it (as `mute_delete`, through the fan-out's own add: only while followed, not
muted and on no exclusive list again). A crash between the two steps shows nothing
wrong: the home read still leaves members out (`exclusive_queue`, one ZRANGE of the
set in the page's first round trip; `timeline.selectors._home_read`), and a page
whose statuses all went to exclusive lists says so and still pages on. A
`list_exclusive` out of line with the lists (a store from before it) is found and
rebuilt by `timelines check|repair`.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import orjson
from django.conf import settings

from config.pipelines import Deferred, LuaScript, ReadBatch, pipeline_run
from config.redis import get_redis, is_cluster
from timeline import keys, services
from timeline.domain import NotFound, Refused, normalize_text

LISTS_MAX = 50  # lists per user
MEMBERSHIPS_MAX = 5000  # members of all of a user's lists, counted once per list
LIST_MEMBERS_MAX = 500  # members of one list: what its timeline merges
TITLE_MAX = 100  # characters
# Of whom the owner follows, how many a `followed` list's read brings whole (its
# replies' check); past them, one more round trip asks about the page's replies.
FOLLOWING_READ_MAX = 1000

# Which replies a list shows (a reply to its own author, or to the owner, always).
REPLIES_POLICIES = {
    "list": "Replies to people on the list",
    "followed": "Replies to anyone you follow",
    "none": "No replies to others",
}
DEFAULT_POLICY = "list"


class ListRefused(Refused):
    """A list, or a member of one, is refused (the message says why)."""


class NotFollowed(ListRefused):
    """A member to add is someone the owner does not follow."""

    api_error = "You must follow this account"


@dataclass(frozen=True, slots=True)
class List:
    id: int
    title: str
    replies_policy: str = DEFAULT_POLICY
    exclusive: bool = False

    def own_json(self) -> str:
        """What `lists:{<uid>}` holds for it."""
        return json.dumps(
            {
                "title": self.title,
                "replies_policy": self.replies_policy,
                "exclusive": self.exclusive,
            },
            ensure_ascii=False,
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, lid: int, value: str) -> List | None:
        """A list from its stored JSON; None for a field written by hand."""
        try:
            row = json.loads(value)
            policy = row.get("replies_policy")
            return cls(
                id=lid,
                title=str(row["title"]),
                replies_policy=policy if policy in REPLIES_POLICIES else DEFAULT_POLICY,
                exclusive=bool(row.get("exclusive")),
            )
        except (ValueError, KeyError, TypeError, AttributeError):
            return None

    @property
    def policy_label(self) -> str:
        return REPLIES_POLICIES[self.replies_policy]

    def shows_reply(
        self, *, author: int, to: int | None, owner: int, members, followed
    ) -> bool:
        """Whether a status by `author` replying to `to` shows on the list
        (Mastodon's `FeedManager#filter_from_list?`): any that is no reply, or a
        reply to its own author or to the owner; else as the policy says, to a
        member (`members`), to someone the owner follows (`followed(uid)`), or
        none."""
        if to is None or to in (author, owner):
            return True
        if self.replies_policy == "list":
            return to in members
        if self.replies_policy == "followed":
            return followed(to)
        return False


def _lists_from(values: dict) -> list[List]:
    found = []
    for name, value in values.items():
        if name.isdecimal():
            entry = List.from_json(int(name), value)
            if entry is not None:
                found.append(entry)
    return sorted(found, key=lambda e: e.id)


# KEYS: the owner's lists, list members, following, list_exclusive, mutes and, on one
# server, `muters`. ARGV: what ('new', 'set', 'del', 'add', 'rem', 'forget', 'sync'),
# the owner's uid, LISTS_MAX, MEMBERSHIPS_MAX, LIST_MEMBERS_MAX, the list's id (of
# 'forget': the member's uid), the list's JSON ('new', 'set'), then the members' uids
# ('add', 'rem'), or of 'set' the JSON it was made from. Checks, then writes, then
# brings `list_exclusive` in line with the lists as they now are (`sync`: who is on
# an exclusive list one can read, as `List.from_json` reads it) and, on one server,
# the owner's bit in `muters` ("has home skips": mutes or exclusive members). Returns
# {1, the new list's id or 0, the uids that came onto list_exclusive, those that
# left it (each space-separated)}; {-1}: no such list; {-2, uid}: not followed; {-3}:
# past LISTS_MAX; {-4}: past MEMBERSHIPS_MAX; {-5}: past LIST_MEMBERS_MAX; {-6}: the
# list changed since it was read ('set'). 'forget' takes a member not followed (any
# more) off every list: {n removed, 0, ...}. 'sync' only brings list_exclusive in
# line (`timelines repair`).
_WRITE = LuaScript(
    """
local lists, members, following = KEYS[1], KEYS[2], KEYS[3]
local excl, mutes, muters = KEYS[4], KEYS[5], KEYS[6]
local op, owner, lid = ARGV[1], ARGV[2], ARGV[6]
local function range(l)
  return redis.call('ZRANGEBYLEX', members, '[' .. l .. ':', '(' .. l .. ';')
end
local function chunked(cmd, key, names)
  for i = 1, #names, 1000 do
    redis.call(cmd, key, unpack(names, i, math.min(i + 999, #names)))
  end
end
local function remove(names) chunked('ZREM', members, names) end
-- `list_exclusive` made what the lists say, exactly: the members of every exclusive
-- list (one with a title, as the pages read it), each once. Returns who came onto
-- it and who left it, space-separated, for the caller's sweep and backfill.
local function done(code, made)
  local want, fields = {}, redis.call('HGETALL', lists)
  for i = 1, #fields, 2 do
    local l = fields[i]
    if string.match(l, '^%d+$') then
      local ok, row = pcall(cjson.decode, fields[i + 1])
      if ok and type(row) == 'table' and row.title ~= nil
          and row.exclusive == true then
        for _, name in ipairs(range(l)) do
          local uid = string.sub(name, #l + 2)
          if string.match(uid, '^%d+$') then want[uid] = true end
        end
      end
    end
  end
  local came, left = {}, {}
  for _, uid in ipairs(redis.call('ZRANGE', excl, 0, -1)) do
    if want[uid] then want[uid] = nil else left[#left + 1] = uid end
  end
  for uid in pairs(want) do came[#came + 1] = uid end
  table.sort(came)
  chunked('ZREM', excl, left)
  for i = 1, #came, 500 do
    local scored = {}
    for j = i, math.min(i + 499, #came) do
      scored[#scored + 1] = 0
      scored[#scored + 1] = came[j]
    end
    redis.call('ZADD', excl, unpack(scored))
  end
  if muters then
    local skips = redis.call('EXISTS', mutes, excl) > 0 and 1 or 0
    redis.call('SETBIT', muters, owner, skips)
  end
  return {code, made or 0, table.concat(came, ' '), table.concat(left, ' ')}
end
if op == 'sync' then return done(1) end
if op == 'new' then
  local n = redis.call('HLEN', lists) - redis.call('HEXISTS', lists, 'next')
  if n >= tonumber(ARGV[3]) then return {-3} end
  local made = redis.call('HINCRBY', lists, 'next', 1)
  redis.call('HSET', lists, made, ARGV[7])
  return done(1, made)
end
if op == 'forget' then
  if redis.call('ZSCORE', following, lid) then return {0} end
  local gone = {}
  for _, name in ipairs(redis.call('HKEYS', lists)) do
    if name ~= 'next' then gone[#gone + 1] = name .. ':' .. lid end
  end
  if #gone == 0 then return {0} end
  return done(redis.call('ZREM', members, unpack(gone)))
end
if redis.call('HEXISTS', lists, lid) == 0 then return {-1} end
if op == 'set' then
  if ARGV[8] and redis.call('HGET', lists, lid) ~= ARGV[8] then return {-6} end
  redis.call('HSET', lists, lid, ARGV[7])
  return done(1)
end
if op == 'del' then
  redis.call('HDEL', lists, lid)
  remove(range(lid))
  return done(1)
end
local names, seen = {}, {}
for i = 8, #ARGV do
  local name = lid .. ':' .. ARGV[i]
  if not seen[name] then
    seen[name] = true
    names[#names + 1] = name
  end
end
if op == 'rem' then
  if #names > 0 then remove(names) end
  return done(1)
end
local new = {}
for i, name in ipairs(names) do
  local uid = string.sub(name, #lid + 2)
  if not redis.call('ZSCORE', following, uid) then return {-2, uid} end
  if not redis.call('ZSCORE', members, name) then new[#new + 1] = name end
end
if #new == 0 then return done(1) end
local function over()
  if redis.call('ZCARD', members) + #new > tonumber(ARGV[4]) then return -4 end
  if #range(lid) + #new > tonumber(ARGV[5]) then return -5 end
  return nil
end
if over() then
  -- Full: first drop the entries of people no longer followed (an unfollow whose
  -- last step was cut short), which no read shows.
  local stale = {}
  for _, name in ipairs(redis.call('ZRANGE', members, 0, -1)) do
    local uid = string.match(name, ':(%d+)$')
    if not uid or not redis.call('ZSCORE', following, uid) then
      stale[#stale + 1] = name
    end
  end
  if #stale > 0 then remove(stale) end
  local refused = over()
  if refused then return {refused} end
end
for _, name in ipairs(new) do redis.call('ZADD', members, 0, name) end
return done(1)
"""
)


def _list_keys(uid: int) -> list[str]:
    return [keys.lists(uid), keys.list_members(uid), keys.following(uid)]


def _write_keys(uid: int) -> list[str]:
    return [
        *_list_keys(uid),
        keys.list_exclusive(uid),
        keys.mutes(uid),
        *([] if is_cluster() else [keys.muters()]),
    ]


def _write_args(uid: int, op: str, lid: int, value: str = "", extra=()) -> list:
    return [op, uid, LISTS_MAX, MEMBERSHIPS_MAX, LIST_MEMBERS_MAX, lid, value, *extra]


class _Raced(Exception):
    """The list changed between its read and the step that writes it."""


_RETRIES = 5  # a change made again from a fresh read, when another raced it


def _write(uid: int, op: str, lid: int, value: str = "", uids=()) -> list:
    out = _WRITE(keys=_write_keys(uid), args=_write_args(uid, op, lid, value, uids))
    code = int(out[0])
    if code >= 0:
        _home_sync(uid, came=_split(out[2]), left=_split(out[3]))
        return out
    if code == -1:
        raise NotFound("No such list.")
    if code == -6:
        raise _Raced()
    if code == -2:
        raise NotFollowed("You must follow this account to add it to a list.")
    if code == -3:
        raise ListRefused(f"You have {LISTS_MAX} lists, the most an account may keep.")
    if code == -4:
        raise ListRefused(
            f"Your lists hold {MEMBERSHIPS_MAX} members in all, the most an account "
            "may keep."
        )
    raise ListRefused(f"A list holds at most {LIST_MEMBERS_MAX} accounts.")


def _split(uids: str) -> list[int]:
    return [int(u) for u in uids.split()]


def _home_sync(uid: int, *, came: list[int], left: list[int]) -> None:
    """The owner's home after a change of who is on their exclusive lists (what
    `_WRITE` said came onto `list_exclusive` and left it), as a mute and an unmute
    change it: those who came have their statuses swept out (by whose status it is:
    the home's own ids, asked of each one's `posts`), those who left have their
    newest FOLLOW_BACKFILL brought back, through the fan-out's own add (only while
    the owner follows them, mutes them not and has them on no exclusive list again).
    A crash between the change and this step leaves statuses the home read leaves
    out anyway (`timeline.selectors._home_read`), or a few missing until the next."""
    home = keys.home(uid)
    if came:
        # Read after the change holds: no add of theirs reaches the home from then
        # on, so what it holds now is all a sweep looks at.
        held = get_redis().zrange(home, 0, -1)
        if held:
            posted = pipeline_run(
                lambda pipe: [pipe.zmscore(keys.posts(m), held) for m in came],
                confirm=False,
            )
            theirs = [
                (
                    m,
                    [
                        sid
                        for sid, score in zip(held, scores, strict=True)
                        if score is not None
                    ],
                )
                for m, scores in zip(came, posted, strict=True)
            ]
            if any(sids for _, sids in theirs):
                pipeline_run(
                    lambda pipe: [
                        services.HOME_DROP_KEPT_OUT.queue(
                            pipe,
                            keys=[home, keys.list_exclusive(uid)],
                            args=[m, *sids],
                        )
                        for m, sids in theirs
                        if sids
                    ]
                )
    if left:
        newest = pipeline_run(
            lambda pipe: [
                pipe.zrevrange(keys.posts(m), 0, settings.FOLLOW_BACKFILL - 1)
                for m in left
            ],
            confirm=False,
        )
        back = [
            (m, [int(s) for s in sids])
            for m, sids in zip(left, newest, strict=True)
            if sids
        ]
        if back:
            pipeline_run(
                lambda pipe: [
                    services._timeline_add(pipe, readers=[uid], author_id=m, sids=sids)
                    for m, sids in back
                ]
            )


def _title(title: str | None) -> str:
    title = normalize_text(title or "").replace("\n", " ").strip()
    if not title:
        raise ListRefused("Give the list a title.")
    if len(title) > TITLE_MAX:
        raise ListRefused(f"A title is at most {TITLE_MAX} characters.")
    return title


def _policy(policy: str | None) -> str:
    policy = policy or DEFAULT_POLICY
    if policy not in REPLIES_POLICIES:
        raise ListRefused("The replies policy is followed, list or none.")
    return policy


def list_create(
    *,
    uid: int,
    title: str,
    replies_policy: str | None = None,
    exclusive: bool = False,
) -> List:
    """A new list of user `uid`'s, with no members."""
    made = List(0, _title(title), _policy(replies_policy), bool(exclusive))
    out = _write(uid, "new", 0, made.own_json())
    return List(int(out[1]), made.title, made.replies_policy, made.exclusive)


def list_update(
    *,
    uid: int,
    lid: int,
    title: str | None = None,
    replies_policy: str | None = None,
    exclusive: bool | None = None,
) -> List:
    """Change what is given of a list (NotFound: no such list, or deleted
    meanwhile: the script checks it as it writes). The step writes only over the
    list it was made from: two changes at once, a rename and a change of its
    replies, keep both (the second is made again from what the first wrote)."""
    for _ in range(_RETRIES):
        raw = get_redis().hget(keys.lists(uid), lid)
        current = List.from_json(lid, raw) if raw is not None else None
        if current is None:
            raise NotFound("No such list.")
        changed = List(
            lid,
            _title(title) if title is not None else current.title,
            _policy(replies_policy)
            if replies_policy is not None
            else current.replies_policy,
            current.exclusive if exclusive is None else bool(exclusive),
        )
        try:
            _write(uid, "set", lid, changed.own_json(), (raw,))
            return changed
        except _Raced:
            continue
    raise ListRefused("This list is being changed elsewhere: try again.")


def list_delete(*, uid: int, lid: int) -> None:
    """Delete a list and its memberships, in one step (its id is not given again)."""
    _write(uid, "del", lid)


def members_add(*, uid: int, lid: int, member_ids) -> None:
    """Add accounts user `uid` follows to one of their lists, all or none
    (NotFollowed names none of them: Mastodon's 422)."""
    _write(uid, "add", lid, uids=[int(m) for m in member_ids])


def members_remove(*, uid: int, lid: int, member_ids) -> None:
    """Take accounts off one of user `uid`'s lists (those not on it: nothing)."""
    _write(uid, "rem", lid, uids=[int(m) for m in member_ids])


def forget_queue(pipe, *, owner_id: int, member_id: int) -> None:
    """Queue taking `member_id` off every list of `owner_id`'s, unless the owner
    follows them (again): the last step of an unfollow or a block."""
    _WRITE.queue(
        pipe,
        keys=_write_keys(owner_id),
        args=_write_args(owner_id, "forget", member_id),
    )


# Reads.


def lists_get(*, uid: int) -> list[List]:
    """User `uid`'s lists, oldest first (one round trip)."""
    return _lists_from(get_redis().hgetall(keys.lists(uid)))


def lists_queue(reads: ReadBatch, uid: int) -> Deferred[list[List]]:
    """Queue the read of user `uid`'s lists, oldest first (trust it once the
    viewer is proven)."""
    return reads.queue(
        lambda pipe: pipe.hgetall(keys.lists(uid)),
        lambda replies: _lists_from(replies[0]),
    )


# KEYS: the owner's lists, list members and following. ARGV: 'one', a list's id
# and how many followees to read whole for a `followed` list; or 'of' and a
# member's uid; or 'exclusive'. Returns one JSON string: for 'one', [the list's
# JSON or null, its members the owner follows, (a `followed` list's) the first
# followees, one past the count asked]; for 'of', [the lists hash's fields and
# values, the ids of the lists the member is on, if the owner follows them]; for
# 'exclusive', the members of the owner's exclusive lists (at most
# MEMBERSHIPS_MAX), by the same rule as `_WRITE`'s `done`: what `list_exclusive`
# should hold (`timelines check`, which passes it as KEYS[4] and gets [those
# members, what it holds], read in one step). Read-only.
_READ = LuaScript(
    """
local lists, members, following = KEYS[1], KEYS[2], KEYS[3]
local null = cjson.null
local function listed(t)
  if #t == 0 then return {null} end
  return t
end
if ARGV[1] == 'exclusive' then
  local fields, out = redis.call('HGETALL', lists), {}
  for i = 1, #fields, 2 do
    local lid = fields[i]
    local ok, row = pcall(cjson.decode, fields[i + 1])
    -- Only a list the pages can read (`List.from_json`: one with a title), so the
    -- owner sees, and can undo, what leaves their home; only entries naming a uid.
    if string.match(lid, '^%d+$') and ok and type(row) == 'table'
        and row.title ~= nil and row.exclusive == true then
      for _, name in ipairs(redis.call(
          'ZRANGEBYLEX', members, '[' .. lid .. ':', '(' .. lid .. ';')) do
        local uid = string.sub(name, #lid + 2)
        if string.match(uid, '^%d+$') then out[#out + 1] = uid end
      end
    end
  end
  if KEYS[4] then
    return cjson.encode({listed(out), listed(redis.call('ZRANGE', KEYS[4], 0, -1))})
  end
  return cjson.encode(listed(out))
end
if ARGV[1] == 'of' then
  local member, on = ARGV[2], {}
  local fields = redis.call('HGETALL', lists)
  if redis.call('ZSCORE', following, member) then
    for i = 1, #fields, 2 do
      local lid = fields[i]
      if lid ~= 'next' and redis.call('ZSCORE', members, lid .. ':' .. member) then
        on[#on + 1] = lid
      end
    end
  end
  return cjson.encode({listed(fields), listed(on)})
end
local lid = ARGV[2]
local row = redis.call('HGET', lists, lid)
if not row then return cjson.encode({null, {null}, {null}}) end
local kept, at = {}, #lid + 2
for _, name in ipairs(redis.call(
    'ZRANGEBYLEX', members, '[' .. lid .. ':', '(' .. lid .. ';')) do
  local uid = string.sub(name, at)
  if redis.call('ZSCORE', following, uid) then kept[#kept + 1] = uid end
end
local followed = {}
local ok, fields = pcall(cjson.decode, row)
if ok and type(fields) == 'table' and fields.replies_policy == 'followed' then
  followed = redis.call('ZRANGE', following, 0, tonumber(ARGV[3]))
end
return cjson.encode({row, listed(kept), listed(followed)})
"""
)


@dataclass(frozen=True, slots=True)
class ListRead:
    """One list as a read of it found it: the list, its members the owner follows
    (by uid), and (a `followed` list's) whom the owner follows, when read whole
    (None: past FOLLOWING_READ_MAX, or not read)."""

    list: List
    members: tuple[int, ...]
    following: frozenset[int] | None


def _uids(values: list) -> list[int]:
    return [] if values == [None] else [int(v) for v in values]


def list_queue(reads: ReadBatch, uid: int, lid: int) -> Deferred[ListRead | None]:
    """Queue the read of one of user `uid`'s lists with its followed members, in
    one script of the owner's slot; the value None: no such list."""

    def build(pipe) -> None:
        _READ.queue(
            pipe,
            keys=_list_keys(uid),
            args=["one", lid, FOLLOWING_READ_MAX],
        )

    def parse(replies: list) -> ListRead | None:
        row, members, followed = orjson.loads(replies[0])
        found = List.from_json(lid, row) if row is not None else None
        if found is None:
            return None
        followees = _uids(followed)
        return ListRead(
            list=found,
            members=tuple(sorted(_uids(members))),
            following=frozenset(followees)
            if found.replies_policy == "followed"
            and len(followees) <= FOLLOWING_READ_MAX
            else None,
        )

    return reads.queue(build, parse)


def member_lists_queue(
    reads: ReadBatch, uid: int, member_id: int
) -> Deferred[tuple[list[List], frozenset[int]]]:
    """Queue the read of user `uid`'s lists and the ids of those `member_id` is on
    (none while the owner does not follow them), in one script of the owner's
    slot."""

    def build(pipe) -> None:
        _READ.queue(pipe, keys=_list_keys(uid), args=["of", member_id])

    def parse(replies: list) -> tuple[list[List], frozenset[int]]:
        fields, on = orjson.loads(replies[0])
        pairs = [] if fields == [None] else fields
        values = dict(zip(pairs[::2], pairs[1::2], strict=True))
        return _lists_from(values), frozenset(_uids(on))

    return reads.queue(build, parse)


def exclusive_queue(reads: ReadBatch, uid: int) -> Deferred[frozenset[int]]:
    """Queue the read of who is on user `uid`'s exclusive lists (whose statuses
    their home leaves out): `list_exclusive:{uid}`, which every change of the lists
    keeps in line in the same script (`_WRITE`). Trust it once the viewer is proven.
    A user without exclusive lists costs it one ZRANGE of a key that is not there."""
    return reads.queue(
        lambda pipe: pipe.zrange(keys.list_exclusive(uid), 0, -1),
        lambda replies: frozenset(int(u) for u in replies[0]),
    )


def exclusive_check_queue(pipe, uid: int) -> None:
    """Queue the reading, in one script of the owner's slot, of who should be on
    `list_exclusive:{uid}` by the lists themselves and who is (`timelines check`)."""
    _READ.queue(
        pipe, keys=[*_list_keys(uid), keys.list_exclusive(uid)], args=["exclusive"]
    )


def exclusive_in_line(reply: str) -> bool:
    """Whether `exclusive_check_queue`'s reply found the set as the lists say."""
    expected, held = orjson.loads(reply)
    return frozenset(_uids(expected)) == frozenset(_uids(held))


def exclusive_sync(*, uid: int) -> None:
    """Bring `list_exclusive:{uid}` (and one server's `muters` bit) in line with
    user `uid`'s lists, and their home with it (`timelines repair`). Idempotent."""
    _write(uid, "sync", 0)


def members_get(*, uid: int, lid: int) -> tuple[int, ...] | None:
    """The members of one of user `uid`'s lists whom they follow, by uid (None: no
    such list): one round trip."""
    reads = ReadBatch()
    found = list_queue(reads, uid, lid).value
    return found.members if found is not None else None
