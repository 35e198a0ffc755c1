"""Bring a store written by an older version to the current key layout.

The store records its layout in `store:layout`. Each process checks it on its first
connection (`layout_check`): an empty store is stamped with LAYOUT, a store of any
other layout is refused until `manage.py upgrade_store` (`store_upgrade`) brought it
forward.

- Layout 2 keeps `follower_names:{<uid>}` beside every `followers:{<uid>}` (the
  profile names the people in common from it) and no longer uses `store:epoch`.
  The upgrade walks the store with SCAN (every master of a Cluster), names every
  follower that has no name yet and deletes the legacy key.
- Layout 3 runs on Redis Cluster: status ids come from 256 id
  shards (`timeline/ids.py`) instead of `statuses:next_id`, and the global timeline
  is partitioned (`timeline:global:{g<p>}`) instead of one `timeline:global`. The
  upgrade moves the global timeline's entries into the partitions and deletes both
  legacy keys; old status ids stay valid (every new id is larger).
- Layout 4 skips inactive readers in the fan-out: a reader is active
  while their `seen:{<uid>}` stamp lives (FANOUT_ACTIVE_DAYS). The upgrade stamps
  every user of the store as seen on the day of the upgrade (SET NX: a stamp the
  site already wrote is kept), so no one's home stops filling because of it.
- Layout 5 finds people by name (`users:names`, the search's
  prefix index). The upgrade adds every user's username and display name to it
  (ZADD of the same member is a no-op, so a repeat or an entry the site wrote
  meanwhile changes nothing).
- Layout 6: on one server the fan-out's push trusts a clear bit in
  `muters` to mean "mutes no one", and reads no `mutes:{<uid>}` for that reader
  (`timeline.fanout._FOLLOWERS_PUSH`). The upgrade sets the bit of every user whose
  `mutes:{<uid>}` exists (SETBIT: a repeat changes nothing; a bit left set for
  someone who unmutes everyone meanwhile only makes the push look, as before).
  `seen:days` needs no step: a stamp it lacks is looked up as before, and the next
  day's stamp writes it. A Cluster has neither key: nothing to do there.
- Layout 7 (this version) counts the site's users and statuses as it goes
  (`timeline/counts.py`: `counts:{q<k>}` per slot, changed in the steps that
  change what counts, and `counts:site`, their sum, which a fan-out worker writes
  every SITE_COUNTS_SECONDS and `/api/v1/instance` reads). The upgrade counts them
  from the store (`counts_recount`: the users SCAN finds, each one's `posts`),
  slot by slot, each slot in one script, and writes the sum, so the upgraded
  store answers at once. The store is quiet meanwhile (the new version serves
  once the layout is recorded), so the counts are exact; a run again finds them
  right and changes nothing.

Each step runs only for a store recorded below its layout (none recorded: layout 1),
so a run on an upgraded store changes nothing. That matters most for layout 4: its
stamp says "seen today", true only of a store whose version kept no stamps; on a
store that keeps them it would mark every away reader active, and their home would
never be rebuilt when they come back (`timeline.services.reader_seen`). The one
exception is layout 6's step, which runs on every run on one server: a store copied
from a Cluster records the current layout without `muters`, and a bit it sets is
never wrong (at worst the push looks at someone's mutes), so on a store the site
kept it changes nothing.

Stop the old version first: it does not check the layout, and would write the legacy
keys again (a post of it would take ids from the deleted `statuses:next_id`, starting
over at 1). This version refuses the store until the upgrade is done, and the
upgrade is safe while this version serves and safe to repeat: a name is written only
where none is (HSETNX) and only while the follower still follows (checked in the same
script, in the owner's slot), so a follow or unfollow during the walk is never
undone; the global entries are added before the old key is deleted. An interrupted
run is simply run again. The layout is recorded last, once everything is there.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from accounts import keys as account_keys
from accounts.domain import User
from accounts.selectors import users_queue
from accounts.services import (
    names_entries,
    names_index_queue,
    seen_day,
    seen_ttl_seconds,
)
from config.pipelines import LuaScript, ReadBatch, pipeline_run
from config.redis import StoreRefused, get_redis, is_cluster, key_count
from timeline import keys
from timeline.counts import SiteCounts, counts_recount
from timeline.services import global_add_queue

LAYOUT = 7
SCAN_COUNT = 1000  # keys SCAN examines per round trip
BATCH = 100  # followers zsets whose names are checked per round of round trips
ZSCAN_COUNT = 1000  # followers read per zset per round trip (all of a small one)

# KEYS: a user's followers zset and follower-names hash. ARGV: uid, name pairs.
# Names each uid that still follows the user and has no name yet; returns how many.
_NAMES_BACKFILL = LuaScript(
    """
local added = 0
for i = 1, #ARGV, 2 do
  if redis.call('ZSCORE', KEYS[1], ARGV[i]) then
    added = added + redis.call('HSETNX', KEYS[2], ARGV[i], ARGV[i + 1])
  end
end
return added
"""
)

# KEYS: the layout key. ARGV: a layout. Raises the recorded layout, never lowers it
# (an older upgrade run against a newer store must not mark it old).
_LAYOUT_RAISE = LuaScript(
    """
local current = tonumber(redis.call('GET', KEYS[1]) or '0') or 0
if current < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  return 1
end
return 0
"""
)


class StoreOutdated(StoreRefused):
    """The store's key layout is not the one this version reads and writes."""


def layout_check(client) -> None:
    """Refuse a store of another layout; stamp an empty one with LAYOUT.

    Runs once per process, on its first connection (`config.redis.on_first_connect`).
    """
    recorded = client.get(keys.store_layout())
    if recorded is not None and int(recorded) == LAYOUT:
        return
    if recorded is None and key_count(client) == 0:
        client.set(keys.store_layout(), LAYOUT, nx=True)
        return layout_check(client)  # a concurrent stamp or upgrade may have won
    if recorded is not None and int(recorded) > LAYOUT:
        raise StoreOutdated(
            f"This Redis store has key layout {recorded}, written by a newer "
            f"version of the site; this version reads layout {LAYOUT}. Deploy the "
            "newer version."
        )
    raise StoreOutdated(
        f"This Redis store has key layout {recorded or '1 (none recorded)'}; this "
        f"version reads layout {LAYOUT}. Run `python manage.py upgrade_store` "
        "(`--dry-run` first to see what it does), then start the site again."
    )


def data_keys(client) -> int:
    """How many keys the store holds besides its layout stamp (every master)."""
    return key_count(client) - client.exists(keys.store_layout())


def layout_stamp(client) -> None:
    """Record LAYOUT in a store that was just emptied (seed --flush)."""
    client.set(keys.store_layout(), LAYOUT)


@dataclass
class UpgradeReport:
    """What an upgrade found and wrote (with `dry_run`, what it would write)."""

    dry_run: bool
    layout_before: int | None = None  # None: no layout recorded (layout 1)
    followers_sets: int = 0  # followers zsets checked
    follows: int = 0  # entries in them
    names_added: int = 0  # follower names written
    unnamed: int = 0  # follows left unnamed: the follower's user hash is gone
    global_entries_moved: int = 0  # entries of the one global timeline, partitioned
    readers_stamped: int = 0  # users given a last-seen stamp (layout 4)
    names_indexed: int = 0  # entries added to the people search's index (layout 5)
    muters_marked: int = 0  # users given their bit in `muters` (layout 6)
    counted: SiteCounts | None = None  # the site's counts (layout 7), if counted
    legacy_keys_deleted: int = 0
    layout_recorded: bool = False  # store:layout raised to LAYOUT by this run


def store_upgrade(
    *,
    dry_run: bool = False,
    batch: int = BATCH,
    progress: Callable[[UpgradeReport], None] | None = None,
) -> UpgradeReport:
    """Upgrade the store to LAYOUT; with `dry_run`, only count what that would do.

    `progress(report)` is called after each batch of followers zsets.
    """
    r = get_redis()
    recorded = r.get(keys.store_layout())
    report = UpgradeReport(
        dry_run=dry_run, layout_before=int(recorded) if recorded else None
    )
    # No layout recorded: layout 1 (an empty store has nothing for a step to walk).
    before = report.layout_before or 1

    def due(layout: int) -> bool:
        """Whether the store predates `layout`, so its step is to run."""
        return before < layout

    if due(2):
        owners: list[int] = []
        for key in r.scan_iter(match=keys.followers_pattern(), count=SCAN_COUNT):
            uid = keys.followers_owner(key)
            if uid is not None:
                owners.append(uid)
            if len(owners) >= batch:
                _follower_names_backfill(owners, report)
                owners = []
                if progress:
                    progress(report)
        if owners:
            _follower_names_backfill(owners, report)
            if progress:
                progress(report)

    if due(3):
        _global_partition(report)
    if due(4):
        _readers_stamp(report, batch=batch * 10)
    if due(5):
        _names_index(report, batch=batch * 10)
    # Whatever the layout (see the module docstring): a store copied from a Cluster
    # records the current layout without one server's `muters`.
    _muters_mark(report, batch=batch * 10)
    if due(7):
        report.counted = counts_recount(write=not dry_run).site
    legacy = (
        [
            account_keys.legacy_store_epoch(),
            keys.legacy_status_ids(),
            keys.legacy_global_timeline(),
        ]
        if due(3)
        else []
    )
    if dry_run:
        report.legacy_keys_deleted = sum(r.exists(key) for key in legacy)
        report.layout_recorded = (report.layout_before or 0) < LAYOUT
    else:
        # One key per command: on a Cluster the keys live in different slots.
        report.legacy_keys_deleted = sum(r.delete(key) for key in legacy)
        report.layout_recorded = bool(
            _LAYOUT_RAISE(keys=[keys.store_layout()], args=[LAYOUT])
        )
    return report


def _each_owners(pattern: str, batch: int, run: Callable[[list[int]], None]) -> None:
    """Run `run` on the owners (uids) of the keys SCAN finds for a per-user
    pattern, `batch` at a time."""
    uids: list[int] = []
    for key in get_redis().scan_iter(match=pattern, count=SCAN_COUNT):
        uid = keys.key_owner(key, pattern)
        if uid is not None:
            uids.append(uid)
        if len(uids) >= batch:
            run(uids)
            uids = []
    if uids:
        run(uids)


def _readers_stamp(report: UpgradeReport, *, batch: int) -> None:
    """Stamp every user without a last-seen stamp as seen today (layout 4)."""
    pattern = account_keys.user_pattern()

    def stamp(uids: list[int]) -> None:
        if report.dry_run:
            found = pipeline_run(
                lambda pipe: [pipe.exists(account_keys.seen(u)) for u in uids],
                confirm=False,
            )
            report.readers_stamped += sum(not n for n in found)
            return
        replies = pipeline_run(
            lambda pipe: [
                pipe.set(
                    account_keys.seen(u), seen_day(), ex=seen_ttl_seconds(), nx=True
                )
                for u in uids
            ]
        )
        report.readers_stamped += sum(bool(reply) for reply in replies)

    _each_owners(pattern, batch, stamp)


def _names_index(report: UpgradeReport, *, batch: int) -> None:
    """Add every user's names to the people search's index (layout 5)."""
    r = get_redis()
    pattern = account_keys.user_pattern()
    fields = [User.USERNAME_FIELD, User.NAME_FIELD, User.DELETED_FIELD]

    def index(uids: list[int]) -> None:
        rows = pipeline_run(
            lambda pipe: [pipe.hmget(account_keys.user(u), fields) for u in uids],
            confirm=False,
        )
        users = [
            User(id=u, username=name, created=0, name=display or "")
            for u, (name, display, deleted) in zip(uids, rows, strict=True)
            if name is not None and deleted is None
        ]
        if not users:
            return
        if report.dry_run:
            entries = [entry for user in users for entry in names_entries(user)]
            scores = r.zmscore(account_keys.names_index(), entries)
            report.names_indexed += sum(score is None for score in scores)
            return
        replies = pipeline_run(
            lambda pipe: [names_index_queue(pipe, user=user) for user in users]
        )
        report.names_indexed += sum(int(reply) for reply in replies)

    _each_owners(pattern, batch, index)


def _muters_mark(report: UpgradeReport, *, batch: int) -> None:
    """Set the `muters` bit of everyone who mutes anyone (layout 6, one server)."""
    if is_cluster():
        return

    def mark(uids: list[int]) -> None:
        if report.dry_run:
            bits = pipeline_run(
                lambda pipe: [pipe.getbit(keys.muters(), u) for u in uids],
                confirm=False,
            )
            report.muters_marked += sum(not bit for bit in bits)
            return
        before = pipeline_run(
            lambda pipe: [pipe.setbit(keys.muters(), u, 1) for u in uids]
        )
        report.muters_marked += sum(not bit for bit in before)

    _each_owners(keys.mutes_pattern(), batch, mark)


def _global_partition(report: UpgradeReport) -> None:
    """Add the one global timeline's entries to the partitions (layouts 1-2)."""
    r = get_redis()
    entries = [int(sid) for sid in r.zrange(keys.legacy_global_timeline(), 0, -1)]
    report.global_entries_moved = len(entries)
    if report.dry_run or not entries:
        return
    for start in range(0, len(entries), 1000):
        chunk = entries[start : start + 1000]
        pipeline_run(lambda pipe, chunk=chunk: global_add_queue(pipe, sids=chunk))


def _follower_names_backfill(owners: list[int], report: UpgradeReport) -> None:
    """Name the unnamed followers of these users, ZSCAN_COUNT followers at a time.

    ZSCAN (not a rank range) returns every follower present for the whole scan,
    even while others follow or unfollow.
    """
    cursors = dict.fromkeys(owners, 0)  # SCAN may return a key twice
    report.followers_sets += len(cursors)
    while cursors:
        current, cursors = cursors, {}

        def read_followers(pipe, current=current) -> None:
            for uid, cursor in current.items():
                pipe.zscan(keys.followers(uid), cursor, count=ZSCAN_COUNT)

        chunk: dict[int, list[int]] = {}
        replies = pipeline_run(read_followers, confirm=False)
        for uid, (cursor, members) in zip(current, replies, strict=True):
            chunk[uid] = [int(member) for member, _score in members]
            if int(cursor):
                cursors[uid] = int(cursor)
        _follower_names_fill(chunk, report)


def _follower_names_fill(chunk: dict[int, list[int]], report: UpgradeReport) -> None:
    """Name the followers in `chunk` (owner -> followers) that have no name yet.

    Three round trips: which names are missing, the missing followers' users, the
    writes (one script call per owner, each in the owner's slot).
    """
    chunk = {uid: followers for uid, followers in chunk.items() if followers}
    report.follows += sum(len(followers) for followers in chunk.values())

    def read_names(pipe) -> None:
        for uid, followers in chunk.items():
            pipe.hmget(keys.follower_names(uid), followers)

    missing: dict[int, list[int]] = {}
    for (uid, followers), names in zip(
        chunk.items(), pipeline_run(read_names, confirm=False), strict=True
    ):
        unnamed = [f for f, name in zip(followers, names, strict=True) if name is None]
        if unnamed:
            missing[uid] = unnamed
    if not missing:
        return
    wanted = sorted({f for followers in missing.values() for f in followers})
    users = users_queue(ReadBatch(), uids=wanted).value
    to_write: dict[int, list[str | int]] = {}
    for uid, followers in missing.items():
        report.unnamed += sum(1 for f in followers if f not in users)
        args = [
            value for f in followers if f in users for value in (f, users[f].username)
        ]
        if args:
            to_write[uid] = args
    if report.dry_run:
        report.names_added += sum(len(args) // 2 for args in to_write.values())
        return

    def name_followers(pipe) -> None:
        for uid, args in to_write.items():
            _NAMES_BACKFILL.queue(
                pipe, keys=[keys.followers(uid), keys.follower_names(uid)], args=args
            )

    if to_write:
        report.names_added += sum(pipeline_run(name_followers))
