"""The site's size, as `/api/v1/instance` tells it: the accounts and statuses there are.

What counts: a user whose sign-up completed (the user hash live and without its
`unindexed` mark, `accounts.services.names_index_owed`) until the account closes;
a status in a counted user's `posts` (a repost is a status: Mastodon's
`Status.local.count` counts local boosts too). Statuses of a closed account stop
counting when it closes, as they stop showing.

Two levels, and nothing more on the post path than the write it counts:

- `counts:{q<k>}`, one per Cluster slot, in the slot of its users (the tag of the
  slot's job queue): changed by `COUNT_LUA` inside the very script that makes the
  change it counts (a completed sign-up, `_PUBLISH`, `_UNPUBLISH`,
  `_ACCOUNT_CLOSE`), each in the user's slot, so a crash or a retry never
  separates the two (a status posted again with its id adds nothing to `posts`,
  and counts nothing). No extra command, no extra round trip: posting latency is
  the figure the site is judged by.
- `counts:site`, one hash (users, statuses, at: when they were added up), written
  by a fan-out worker every SITE_COUNTS_SECONDS (`site_sum`): the one that claims
  the turn (`counts:site:claim`, SET NX PX) reads every slot's counts by scripts
  that add up SUM_CHUNK slots a call, in one round trip per server or Cluster
  node, and writes the totals. `manage.py seed`, `upgrade_store` (layout 7) and
  `timelines repair` write it too, so a fresh or upgraded store answers at once.

The instance reads `counts:site` with one HMGET in the request's round trip, so
what it shows is up to about 1.25 x SITE_COUNTS_SECONDS old (Mastodon's own is
cached too). A key written once a minute by one worker is no hot spot.
"""

from __future__ import annotations

import logging
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import redis
from django.conf import settings

from accounts import keys as account_keys
from accounts.domain import User
from config.pipelines import Deferred, LuaScript, ReadBatch, pipeline_run
from config.redis import get_redis, is_cluster
from timeline import keys

log = logging.getLogger(__name__)

USERS, STATUSES, AT = "users", "statuses", "at"
# The users seen within ACTIVE_MONTH_DAYS (`accounts.keys.active_day`), as the sum
# last counted them: Mastodon's `usage.users.active_month`.
ACTIVE = "active_month"
# Sign-ups completed in a slot, only ever raised: a recount passes the value it read
# before its SCAN, and leaves alone a slot where a sign-up completed since (its
# SCAN may have missed that user; the counts kept meanwhile are the truth).
JOINED = "joined"

# A Lua function for the scripts that change what counts: count(key, users,
# statuses) adds to one slot's counts (`keys.counts`). Adding nothing writes nothing.
COUNT_LUA = f"""
local function count(key, users, statuses)
  if users ~= 0 then redis.call('HINCRBY', key, '{USERS}', users) end
  if statuses ~= 0 then redis.call('HINCRBY', key, '{STATUSES}', statuses) end
end
"""

# The totals of the slots' counts, as {users, statuses}: `_SUM` takes the counts'
# keys as KEYS (one server); `_SUM_ON_NODE` as ARGV, declaring none, so a Cluster
# node reads every key it serves (a key it does not serve, its slot moved, is an
# error, never a silent miss; as `jobs._DUE_ON_NODE`).
_SUM_BODY = f"""
local users, statuses = 0, 0
for _, key in ipairs(names) do
  local held = redis.call('HMGET', key, '{USERS}', '{STATUSES}')
  users = users + (tonumber(held[1]) or 0)
  statuses = statuses + (tonumber(held[2]) or 0)
end
return {{users, statuses}}
"""
_SUM = LuaScript("local names = KEYS\n" + _SUM_BODY)
_SUM_ON_NODE = LuaScript("local names = ARGV\n" + _SUM_BODY)
SUM_CHUNK = 1024  # slots per script call: about a millisecond of Redis's time


def slot_keys(slot: int) -> list[str]:
    """The key a script that counts in `slot` takes (for `COUNT_LUA`'s count)."""
    return [keys.counts(slot)]


@dataclass(frozen=True)
class SiteCounts:
    users: int
    statuses: int
    active_month: int = 0


def site_counts_queue(reads: ReadBatch) -> Deferred[SiteCounts]:
    """Queue the read of the site's counts as a worker last added them up (0 before
    any sum: a store nothing has counted)."""

    def parse(replies: list) -> SiteCounts:
        users, statuses, active = (max(int(n or 0), 0) for n in replies[0])
        return SiteCounts(users=users, statuses=statuses, active_month=active)

    return reads.queue(
        lambda pipe: pipe.hmget(keys.counts_site(), [USERS, STATUSES, ACTIVE]), parse
    )


def active_month() -> int:
    """The users seen within ACTIVE_MONTH_DAYS, today's included: one PFCOUNT of
    the days' HyperLogLogs (their union, within about 1%)."""
    # (accounts.services counts sign-ups with this module: imported at call time.)
    from accounts.services import ACTIVE_MONTH_DAYS, seen_day

    today = seen_day()
    days = [account_keys.active_day(today - n) for n in range(ACTIVE_MONTH_DAYS)]
    return int(get_redis().pfcount(*days))


def _slots_added() -> SiteCounts:
    """Every slot's counts added up: SUM_CHUNK slots a script call, one round trip
    per server or Cluster primary (a node whose slots moved since this client last
    asked is read again a command a slot, redirected where the counts now are)."""
    names = [keys.counts(slot) for slot in range(keys.CLUSTER_SLOTS)]
    client = get_redis()
    if not is_cluster(client):
        replies = pipeline_run(
            lambda pipe: [
                _SUM.queue(pipe, keys=names[i : i + SUM_CHUNK], args=[])
                for i in range(0, len(names), SUM_CHUNK)
            ],
            confirm=False,
        )
    else:
        from config.cluster import node_send, primaries_slots

        replies = []
        for node, slots in primaries_slots(client):
            stack = [
                (
                    ("EVALSHA", _SUM_ON_NODE.sha, 0, *(names[s] for s in chunk)),
                    {},
                )
                for chunk in (
                    slots[i : i + SUM_CHUNK] for i in range(0, len(slots), SUM_CHUNK)
                )
            ]
            try:
                replies += node_send(client, node, stack)
            except redis.exceptions.ResponseError as error:  # a slot moved
                log.warning("site counts: %s read slot by slot (%s)", node.name, error)
                replies += [
                    [int(u or 0), int(s or 0)]
                    for u, s in pipeline_run(
                        lambda pipe, slots=slots: [
                            pipe.hmget(names[s], [USERS, STATUSES]) for s in slots
                        ],
                        confirm=False,
                    )
                ]
    return SiteCounts(
        users=sum(int(u) for u, _ in replies),
        statuses=sum(int(s) for _, s in replies),
    )


def site_sum(*, claim: bool = True) -> SiteCounts | None:
    """Add every slot's counts up and write the totals to `counts:site`; the totals,
    or None when another worker claimed this interval's sum (`claim`: the fan-out
    workers' periodic duty; without it, seed, upgrade and repair write it now).
    SITE_COUNTS_SECONDS=0: the workers add nothing up."""
    if claim:
        milliseconds = settings.SITE_COUNTS_SECONDS * 1000
        if not 0 < milliseconds < math.inf:
            return None
        claimed = get_redis().set(
            keys.counts_site_claim(),
            secrets.token_hex(8),
            nx=True,
            px=max(1, round(milliseconds)),
        )
        if not claimed:
            return None
    added = _slots_added()
    # No more active than there are people: a day's HyperLogLog keeps a closed
    # account, and its count is within about 1% (1,000 people may count 1,001).
    site = SiteCounts(added.users, added.statuses, min(active_month(), added.users))
    # A derived value, written again within an interval: no wait for replicas.
    pipeline_run(
        lambda pipe: pipe.hset(
            keys.counts_site(),
            mapping={
                USERS: site.users,
                STATUSES: site.statuses,
                ACTIVE: site.active_month,
                AT: int(time.time()),
            },
        ),
        confirm=False,
    )
    return site


# KEYS: one slot's counts, then the user hash and posts of each user of the slot
# that SCAN found. ARGV: the username, deleted and unindexed fields, whether to
# write (1) or only compare (0), the slot's JOINED read before the SCAN. Counts
# the users and statuses as COUNT_LUA's callers do, in one step; with write, sets
# the counts when they differ. Returns {users, statuses, the users and statuses
# held, 1 if a sign-up completed there since the SCAN began (nothing compared or
# written: the SCAN may have missed its user)}.
_RECOUNT = LuaScript(
    f"""
local name_field, deleted_field, unindexed_field = ARGV[1], ARGV[2], ARGV[3]
local joined = tonumber(redis.call('HGET', KEYS[1], '{JOINED}')) or 0
if joined ~= tonumber(ARGV[5]) then return {{0, 0, 0, 0, 1}} end
local users, statuses = 0, 0
for i = 2, #KEYS, 2 do
  local user = KEYS[i]
  if redis.call('HEXISTS', user, name_field) == 1
     and redis.call('HEXISTS', user, deleted_field) == 0
     and redis.call('HEXISTS', user, unindexed_field) == 0 then
    users = users + 1
    statuses = statuses + redis.call('ZCARD', KEYS[i + 1])
  end
end
local held = redis.call('HMGET', KEYS[1], '{USERS}', '{STATUSES}')
local held_users, held_statuses = tonumber(held[1]) or 0, tonumber(held[2]) or 0
if ARGV[4] == '1' and (held_users ~= users or held_statuses ~= statuses) then
  if users == 0 and statuses == 0 then
    redis.call('HDEL', KEYS[1], '{USERS}', '{STATUSES}')  -- JOINED stays
  else
    redis.call('HSET', KEYS[1], '{USERS}', users, '{STATUSES}', statuses)
  end
end
return {{users, statuses, held_users, held_statuses, 0}}
"""
)

SCAN_COUNT = 1000
BATCH = 200  # slots recounted per round trip


@dataclass
class CountsReport:
    """What a recount found: the slots whose counts were off; `site`: the right
    totals."""

    slots: int = 0  # slots recounted
    off: list[int] = field(default_factory=list)  # slots whose counts were off
    # Slots where a sign-up completed during the walk: left as counted (a later
    # recount looks at them again).
    busy: list[int] = field(default_factory=list)
    site: SiteCounts = SiteCounts(0, 0)

    def problems(self) -> int:
        return len(self.off)


def counts_recount(
    *, write: bool, progress: Callable[[int], None] | None = None
) -> CountsReport:
    """Count every slot's users and statuses again from the users SCAN finds (every
    master of a Cluster) and compare them with the slots' counts; with `write`, set
    what was off and write the site's sum (`site_sum`). Exact on a store nothing
    writes to (an upgrade's); on a live site a user who signs up in a slot after
    the walk began leaves that slot as it was counted (`JOINED`: `report.busy`),
    never written without them."""
    r = get_redis()
    every = range(keys.CLUSTER_SLOTS)
    # Before the SCAN: a user whose sign-up completed by now exists while it runs,
    # and SCAN returns them.
    joined = [
        int(n or 0)
        for n in pipeline_run(
            lambda pipe: [pipe.hget(keys.counts(s), JOINED) for s in every],
            confirm=False,
        )
    ]
    by_slot: dict[int, list[int]] = {}
    found = 0
    for key in r.scan_iter(match=account_keys.user_pattern(), count=SCAN_COUNT):
        uid = keys.key_owner(key, account_keys.user_pattern())
        if uid is not None:
            by_slot.setdefault(keys.slot_of_user(uid), []).append(uid)
            found += 1
            if progress and found % 10_000 == 0:
                progress(found)
    for key in r.scan_iter(match=keys.counts_pattern(), count=SCAN_COUNT):
        slot = keys.counts_slot(key)
        if slot is not None:
            by_slot.setdefault(slot, [])
    report = CountsReport(slots=len(by_slot))
    slots = sorted(by_slot)
    fields = [User.USERNAME_FIELD, User.DELETED_FIELD, User.UNINDEXED_FIELD]
    users_total = statuses_total = 0
    for start in range(0, len(slots), BATCH):
        chunk = slots[start : start + BATCH]

        def recount(pipe, chunk=chunk) -> None:
            for slot in chunk:
                owners = sorted(set(by_slot[slot]))
                _RECOUNT.queue(
                    pipe,
                    keys=[
                        keys.counts(slot),
                        *(
                            k
                            for u in owners
                            for k in (account_keys.user(u), keys.posts(u))
                        ),
                    ],
                    args=[*fields, int(write), joined[slot]],
                )

        replies = pipeline_run(recount, confirm=write)
        for slot, (users, statuses, held_users, held_statuses, busy) in zip(
            chunk, replies, strict=True
        ):
            if busy:
                report.busy.append(slot)
                continue
            users_total += users
            statuses_total += statuses
            if (users, statuses) != (held_users, held_statuses):
                report.off.append(slot)
    report.site = SiteCounts(users=users_total, statuses=statuses_total)
    if write:
        site_sum(claim=False)
    return report
