"""Find and fix what a crash or a bug could leave inconsistent in the timelines.

`python manage.py timelines check` reports, `timelines repair` fixes (`--dry-run`:
reports what it would fix). These kinds of problem, found by walking the store with
SCAN (every master of a Cluster) in pipelined batches:

- **one-sided follows**: `following:{u}` holds a but `followers:{a}` (or
  `follower_names:{a}`) lacks u, or the reverse. `following:{u}` is the truth;
  `services.follow_sync` brings the rest in line, under u's follow lock. A pair whose
  follow job is still queued is work in progress, not a problem.
- **references to deleted statuses** in homes, posts, direct messages, the global
  partitions and the tags' timelines. A post writes the status hash before any
  reference and a delete removes it first, so such a reference is never a write
  in progress, but for the followers' homes while the delete's removal job is
  still queued (it is on its way: not reported) and for the moment a tag's
  fan-out racing a delete takes to see it (`status_publish`); repair removes it.
- **deleted direct messages in conversations** (`timeline.direct`): a
  `conversation_sids:{u}` entry naming a message whose hash is gone (a delete cut
  short before its `undirect` job was queued; the author's `direct:{u}` entry is a
  reference to a deleted status, above). Repair takes the message out of the
  conversation (and the conversation, with its unread mark, when none is left),
  as the job would have; one whose job is on its way (seconds) may be reported.
- **statuses missing from a home that should hold them**: for an active reader
  (their `seen:{u}` stamp lives) and a pushed followee, what every way of filling
  a home guarantees (`_check_homes`): the followee's newest FOLLOW_BACKFILL
  statuses posted after the follow, newer than the home's oldest entry when the
  home is full, but for replies the reply rule kept out (`_reply_reaches`), and
  unless their fan-out job is still queued. (Older ones may be missing for good
  reason: a reader away when they were posted gets only that many of each
  followee when back. A status posted just before the follow by the clocks of a
  skewed machine is in the follow's backfill anyway.) Repair adds them the way
  the fan-out does (checked again in the reader's slot, a reply by the rule).
- **stuck jobs**: failed jobs, and jobs queued for longer than `stuck_after`.
  Repair queues them again, wakes the workers and runs each of them once itself
  (`_requeued_run`), then returns: it runs none of the jobs queued meanwhile, so
  it ends on a live site, and a job that fails again waits for its retry.
- **unfinished account deletions**: an account marked deleted whose `account` job
  is no longer queued (it failed, or was lost). While that job is queued, what it
  has still to remove (follows of the account, its statuses in homes) is work in
  progress, not a problem, and is not reported; once it is not, only the deletion
  is reported, and repair queues its job again (a failed one with the failed jobs)
  and runs it once, as the stuck jobs.
- **one-sided blocks** (`blocks:{a}` holds b but `blocked_by:{b}` lacks a, or the
  reverse) and **follows that survive a block** (either way). `blocks:{a}` is the
  truth; `blocks.block_sync` brings both sides in line with it and ends the follows.
  A pair whose block job is still queued is work in progress, not a problem.
  (A muted followee's statuses are not "missing" from the home, above.)
- **one-sided follow requests** (`follow_requests:{o}` holds r but `requested:{r}`
  lacks o, or the reverse: a request, deny or cancel cut short between its two
  steps) and **a private account's statuses in the global timeline** (a worker
  stalled past the grace between its check and its add). `follow_requests:{o}` is
  the truth: repair writes or removes the requester's side after it, and removes
  the statuses from the global timeline. A pair whose approval job is still queued
  is work in progress, not a problem (`timeline.privacy`). An unlisted status
  there (a worker of a release before them published it) is removed the same way.
- **people with home skips missing from the fan-out's index** (one server): a
  `mutes:{u}` or `list_exclusive:{u}` that exists while u's bit in `muters` is
  clear (the push would take u for someone who skips no one, `timeline.fanout`).
  Repair sets the bit.
- **exclusive lists out of line with `list_exclusive`**: `list_exclusive:{u}`
  differs from the members of u's exclusive lists (`timeline.lists`: a store from
  before the set, or a hand edit; every change of the lists writes it in the same
  script). The lists are the truth: repair rewrites the set in the lists' own
  script and sweeps or backfills the home as a change of the lists does.
- **site counts off** (`timeline/counts.py`, what `/api/v1/instance` shows): a
  slot's counts that differ from its users and their `posts` (a bug, a hand
  edit). Repair counts each slot again in one script and writes the site's sum
  at once (`counts.counts_recount`), rather than at the workers' next turn. On a
  live site a slot where a sign-up completes during the walk is left as the site
  counted it (its `joined` moved: the SCAN may have missed that user), neither
  reported nor written; the next check looks at it again.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

from django.conf import settings

from accounts import keys as account_keys
from accounts.domain import User
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis, is_cluster
from timeline import blocks, direct, fanout, jobs, keys, lists, services
from timeline.counts import CountsReport, counts_recount, site_sum
from timeline.domain import Status
from timeline.ids import first_id_at, shard_of

SCAN_COUNT = 1000
BATCH = 200  # keys whose contents are checked per round of round trips
EXAMPLES = 5


@dataclass
class Findings:
    """What a check found; `repaired` counts what a repair fixed."""

    keys_scanned: int = 0
    one_sided: list[tuple[int, int]] = field(default_factory=list)  # (u, a)
    dead_refs: dict[str, list[int]] = field(default_factory=dict)  # key -> sids
    missing: list[tuple[int, int, list[int]]] = field(default_factory=list)
    # Of the missing statuses, the replies: sid -> whose status it answers (repair
    # adds them under the reply rule, as the fan-out does).
    replies_to: dict[int, int] = field(default_factory=dict)
    failed_jobs: list[tuple[int, str]] = field(default_factory=list)  # (slot, id)
    stuck_jobs: list[tuple[int, str]] = field(default_factory=list)  # (slot, id)
    # Accounts being deleted, and the statuses they still hold (ignored as work in
    # progress); the deletions whose job is not queued (a problem), and which of
    # those failed (the failed jobs' repair queues them again).
    deleting: set[int] = field(default_factory=set)
    deleting_sids: set[int] = field(default_factory=set)
    unfinished_deletions: list[int] = field(default_factory=list)
    failed_deletions: set[int] = field(default_factory=set)
    one_sided_blocks: list[tuple[int, int]] = field(default_factory=list)  # (a, b)
    # (follower, followee, blocker): a follow that a block should have ended
    follows_across_blocks: list[tuple[int, int, int]] = field(default_factory=list)
    # (requester, owner): a follow request with one side only
    one_sided_requests: list[tuple[int, int]] = field(default_factory=list)
    private_in_global: list[int] = field(default_factory=list)  # sids
    # uid -> (conversation, sid) of deleted direct messages their conversations name
    dead_messages: dict[int, list[tuple[int, int]]] = field(default_factory=dict)
    unmarked_muters: list[int] = field(default_factory=list)  # uids
    exclusive_off: list[int] = field(default_factory=list)  # owners' uids
    counts: CountsReport = field(default_factory=CountsReport)  # the site's counts

    def problems(self) -> int:
        return (
            self.counts.problems()
            + len(self.unmarked_muters)
            + len(self.exclusive_off)
            + len(self.unfinished_deletions)
            + len(self.one_sided_requests)
            + len(self.private_in_global)
            + len(self.one_sided_blocks)
            + len(self.follows_across_blocks)
            + len(self.one_sided)
            + sum(len(v) for v in self.dead_refs.values())
            + sum(len(v) for v in self.dead_messages.values())
            + sum(len(sids) for _, _, sids in self.missing)
            + len(self.failed_jobs)
            + len(self.stuck_jobs)
        )

    def lines(self) -> list[str]:
        """The report, one line per kind of problem (with a few examples)."""

        def some(items) -> str:
            shown = ", ".join(str(x) for x in list(items)[:EXAMPLES])
            return f" (e.g. {shown})" if shown else ""

        refs = sum(len(v) for v in self.dead_refs.values())
        missing = sum(len(sids) for _, _, sids in self.missing)
        return [
            f"One-sided follows: {len(self.one_sided)}"
            + some(f"{u}->{a}" for u, a in self.one_sided),
            f"References to deleted statuses: {refs} in {len(self.dead_refs)} keys"
            + some(self.dead_refs),
            "Deleted direct messages in conversations: "
            f"{sum(len(v) for v in self.dead_messages.values())} of "
            f"{len(self.dead_messages)} users"
            + some(f"user {u}" for u in self.dead_messages),
            f"Statuses missing from homes: {missing} in {len(self.missing)} homes"
            + some(f"home of {u}: {len(s)} of {a}" for u, a, s in self.missing),
            f"Failed jobs: {len(self.failed_jobs)}"
            + some(jid for _, jid in self.failed_jobs),
            f"Stuck jobs: {len(self.stuck_jobs)}"
            + some(jid for _, jid in self.stuck_jobs),
            f"Unfinished account deletions: {len(self.unfinished_deletions)}"
            + some(f"user {u}" for u in self.unfinished_deletions),
            f"One-sided blocks: {len(self.one_sided_blocks)}"
            + some(f"{a}-|{b}" for a, b in self.one_sided_blocks),
            f"Follows across blocks: {len(self.follows_across_blocks)}"
            + some(f"{u}->{v}" for u, v, _ in self.follows_across_blocks),
            f"One-sided follow requests: {len(self.one_sided_requests)}"
            + some(f"{r}?{o}" for r, o in self.one_sided_requests),
            "Private or unlisted statuses in the global timeline: "
            f"{len(self.private_in_global)}" + some(self.private_in_global),
            "People with home skips (mutes, exclusive lists) missing from the "
            f"fan-out's index: {len(self.unmarked_muters)}"
            + some(self.unmarked_muters),
            "Exclusive lists out of line with list_exclusive: "
            f"{len(self.exclusive_off)}" + some(self.exclusive_off),
            f"Site counts off: {len(self.counts.off)} slots"
            + some(f"slot {slot}" for slot in self.counts.off),
        ]


def _owners(pattern: str, findings: Findings, progress) -> Iterator[list[int]]:
    """The uids of every key matching a per-user pattern, BATCH at a time."""
    batch: list[int] = []
    for key in get_redis().scan_iter(match=pattern, count=SCAN_COUNT):
        findings.keys_scanned += 1
        if progress and findings.keys_scanned % 10_000 == 0:
            progress(findings)
        uid = keys.key_owner(key, pattern)
        if uid is not None:
            batch.append(uid)
        if len(batch) >= BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _read(build: Callable) -> list:
    return pipeline_run(build, confirm=False)


def _queued(pairs: list[tuple[int, str]]) -> list[bool]:
    """Whether each (slot, job id) is still in its queue."""
    replies = _read(
        lambda pipe: [pipe.zscore(keys.job_queue(slot), jid) for slot, jid in pairs]
    )
    return [reply is not None for reply in replies]


def _check_deletions(findings: Findings, progress) -> None:
    """Accounts marked deleted: their job queued (in progress) or not (a problem)."""
    for batch in _owners(account_keys.user_pattern(), findings, progress):
        marks = _read(
            lambda pipe, b=batch: [
                pipe.hexists(account_keys.user(u), User.DELETED_FIELD) for u in b
            ]
        )
        findings.deleting.update(u for u, m in zip(batch, marks, strict=True) if m)
    uids = sorted(findings.deleting)
    if not uids:
        return
    queued = _queued([(keys.slot_of_user(u), services.account_job_id(u)) for u in uids])
    failed = set(jobs.failed_ids())
    for u, busy in zip(uids, queued, strict=True):
        if not busy:
            findings.unfinished_deletions.append(u)
            if services.account_job_id(u) in failed:
                findings.failed_deletions.add(u)
    posted = _read(
        lambda pipe: [
            pipe.zrange(key(u), 0, -1)
            for u in uids
            for key in (keys.posts, keys.direct)
        ]
    )
    findings.deleting_sids = {int(sid) for sids in posted for sid in sids}


def _check_follows(findings: Findings, progress) -> dict[int, list[tuple[int, int]]]:
    """One-sided follows; returns each follower's followees with follow times."""
    following: dict[int, list[tuple[int, int]]] = {}
    for batch in _owners(keys.following_pattern(), findings, progress):
        rows = _read(
            lambda pipe, b=batch: [
                pipe.zrange(keys.following(u), 0, -1, withscores=True) for u in b
            ]
        )
        pairs = [
            (u, int(a), int(t))
            for u, row in zip(batch, rows, strict=True)
            for a, t in row
        ]
        for u, a, t in pairs:
            following.setdefault(u, []).append((a, t))
        replies = _read(
            lambda pipe, p=pairs: [
                (
                    pipe.zscore(keys.followers(a), u),
                    pipe.hexists(keys.follower_names(a), u),
                )
                for u, a, _ in p
            ]
        )
        for (u, a, _), listed, named in zip(
            pairs, replies[::2], replies[1::2], strict=True
        ):
            if listed is None or not named:
                findings.one_sided.append((u, a))
    for batch in _owners(keys.followers_pattern(), findings, progress):
        rows = _read(
            lambda pipe, b=batch: [pipe.zrange(keys.followers(a), 0, -1) for a in b]
        )
        pairs = [(int(u), a) for a, row in zip(batch, rows, strict=True) for u in row]
        replies = _read(
            lambda pipe, p=pairs: [pipe.zscore(keys.following(u), a) for u, a in p]
        )
        findings.one_sided.extend(
            pair for pair, score in zip(pairs, replies, strict=True) if score is None
        )
    # A follow change whose job is still queued is in progress, not one-sided; so
    # is a follow of an account being deleted (its job ends it).
    findings.one_sided = sorted(
        (u, a)
        for u, a in set(findings.one_sided)
        if u not in findings.deleting and a not in findings.deleting
    )
    pending = _queued(
        [
            (keys.slot_of_user(u), services.follow_job_id(u, a))
            for u, a in findings.one_sided
        ]
    )
    findings.one_sided = [
        pair for pair, busy in zip(findings.one_sided, pending, strict=True) if not busy
    ]
    return following


def _check_refs(
    findings: Findings, progress, following: dict[int, list[tuple[int, int]]]
) -> None:
    """References to statuses whose hash is gone (but for those a removal job
    still queued is on its way to, `_removals_queued`)."""

    def check(refs: dict[str, list[int]]) -> None:
        sids = sorted({sid for group in refs.values() for sid in group})
        exists = _read(lambda pipe: [pipe.exists(keys.status(sid)) for sid in sids])
        gone = {sid for sid, n in zip(sids, exists, strict=True) if not n}
        gone -= findings.deleting_sids  # their account's job removes them
        for key, group in refs.items():
            dead = [sid for sid in group if sid in gone]
            if dead:
                findings.dead_refs[key] = dead

    for pattern, key_of in (
        (keys.home_pattern(), keys.home),
        (keys.posts_pattern(), keys.posts),
        (keys.direct_pattern(), keys.direct),
    ):
        for batch in _owners(pattern, findings, progress):
            rows = _read(
                lambda pipe, b=batch, k=key_of: [pipe.zrange(k(u), 0, -1) for u in b]
            )
            check(
                {
                    key_of(u): [int(s) for s in row]
                    for u, row in zip(batch, rows, strict=True)
                }
            )
    partitions = keys.global_partitions()
    rows = _read(lambda pipe: [pipe.zrange(p, 0, -1) for p in partitions])
    check(
        {
            p: [int(s) for s in row if s != "0"]  # 0: the trim marker
            for p, row in zip(partitions, rows, strict=True)
        }
    )
    # Tags' timelines (capped): a delete or an account job cut short between the
    # hash and its tags, or a fan-out that lost the race to a delete, leaves these.
    tags: list[str] = []
    found = get_redis().scan_iter(match=keys.tag_timeline_pattern(), count=SCAN_COUNT)
    for key in itertools.chain(found, [None]):
        if key is not None:
            findings.keys_scanned += 1
            tags.append(key)
        if tags and (key is None or len(tags) == BATCH):
            rows = _read(lambda pipe, t=tags: [pipe.zrange(k, 0, -1) for k in t])
            check({k: [int(s) for s in row] for k, row in zip(tags, rows, strict=True)})
            tags = []
    queued = _removals_queued(findings, following)
    for key, sids in list(findings.dead_refs.items()):
        kept = [sid for sid in sids if (key, sid) not in queued]
        if kept:
            findings.dead_refs[key] = kept
        else:
            del findings.dead_refs[key]


def _check_conversations(findings: Findings, progress) -> None:
    """Conversations that name a deleted direct message (`timeline.direct`): a
    delete cut short before its `undirect` job was queued (a Cluster runs the hash's
    deletion and the author's step in two round trips), or one whose job is on its
    way (seconds; its removal changes nothing then)."""
    pattern = keys.conversation_sids_pattern()
    for batch in _owners(pattern, findings, progress):
        rows = _read(
            lambda pipe, b=batch: [pipe.hgetall(keys.conversation_sids(u)) for u in b]
        )
        pairs = [
            (u, int(conv), sid)
            for u, row in zip(batch, rows, strict=True)
            for conv, value in row.items()
            for sid in direct.conversation_sids_of(value)
        ]
        exists = _read(
            lambda pipe, p=pairs: [pipe.exists(keys.status(sid)) for _, _, sid in p]
        )
        for (u, conv, sid), n in zip(pairs, exists, strict=True):
            if not n and sid not in findings.deleting_sids:
                findings.dead_messages.setdefault(u, []).append((conv, sid))


def _removals_queued(
    findings: Findings, following: dict[int, list[tuple[int, int]]]
) -> set[tuple[str, int]]:
    """The (home, sid) of the deleted statuses found in homes whose removal job
    (`delete:<author>:<sid>`) is still queued: a delete in progress. The author is
    one the home's owner follows (the job walks the author's followers) whose
    shard the id carries (`timeline.ids`: an id is tick * ID_SHARDS + shard)."""
    pattern = keys.home_pattern()
    candidates: list[tuple[str, int, int]] = []  # (home, sid, author)
    for key, sids in findings.dead_refs.items():
        owner = keys.key_owner(key, pattern)
        if owner is None:
            continue
        for sid in sids:
            shard = sid % keys.ID_SHARDS
            candidates += [
                (key, sid, a)
                for a, _ in following.get(owner, ())
                if shard_of(a) == shard
            ]
    jids = sorted({(a, sid) for _, sid, a in candidates})
    busy = _queued(
        [(keys.slot_of_user(a), services.removal_job_id(a, sid)) for a, sid in jids]
    )
    queued = {pair for pair, b in zip(jids, busy, strict=True) if b}
    return {(key, sid) for key, sid, a in candidates if (a, sid) in queued}


def _reply_reaches(status: Status, reader: int, follows: dict[int, int]) -> bool:
    """Whether the reply rule let this status into the reader's home when it was
    pushed (`services._TIMELINE_ADD`, as a merged home applies it too:
    `selectors._pulled_checked`): it is no reply, or it answers its own author, the
    reader, or someone the reader followed already (`follows`: followee -> the
    first status id after the follow): `Status.reply_follow_decides`."""
    to = status.reply_follow_decides(reader)
    return to is None or (to in follows and follows[to] <= status.id)


def _check_homes(
    findings: Findings, following: dict[int, list[tuple[int, int]]]
) -> None:
    """Statuses of pushed followees missing from active readers' homes.

    What every way of filling a home guarantees of each followee: their newest
    FOLLOW_BACKFILL statuses posted since the follow, above the oldest entry of a
    full home. A follow backfills that many, so does the rebuild of a home whose
    reader was away (the fan-out skipped them meanwhile), a move back to push mode
    adds more (`fanout.run_mode`), and the fan-out pushes every new status; older
    ones may be missing for good reason (the reader was away when they came).
    Replies the reply rule kept out are not expected (`_reply_reaches`).
    """
    readers = [u for u in following if u not in findings.deleting]
    cap = settings.HOME_TIMELINE_CAP
    for start in range(0, len(readers), BATCH):
        batch = readers[start : start + BATCH]
        state = _read(
            lambda pipe, b=batch: [
                (
                    pipe.exists(account_keys.seen(u)),
                    pipe.zcard(keys.home(u)),
                    pipe.zrange(keys.home(u), 0, 0),
                    pipe.zrange(keys.pulls(u), 0, -1),
                    pipe.zrange(keys.mutes(u), 0, -1),
                    pipe.zrange(keys.list_exclusive(u), 0, -1),
                )
                for u in b
            ]
        )
        wanted: list[tuple[int, int, int]] = []  # (u, a, lowest sid expected)
        for i, u in enumerate(batch):
            active, size, oldest, pulled, muted, listed = state[6 * i : 6 * i + 6]
            if not active:
                continue
            floor = int(oldest[0]) + 1 if size >= cap and oldest else 0
            # Pulled followees are merged at read; muted ones and the members of
            # exclusive lists are kept out.
            skipped = {int(a) for a in [*pulled, *muted, *listed]}
            for a, since_us in following[u]:
                if a not in skipped and a not in findings.deleting:
                    since = first_id_at(since_us)
                    wanted.append((u, a, max(floor, since)))
        if not wanted:
            continue
        modes = _read(
            lambda pipe, w=wanted: [pipe.get(keys.fanout_mode(a)) for _, a, _ in w]
        )
        wanted = [w for w, mode in zip(wanted, modes, strict=True) if mode != "pull"]
        posted = _read(
            lambda pipe, w=wanted: [
                pipe.zrevrangebyscore(
                    keys.posts(a), "+inf", low, start=0, num=settings.FOLLOW_BACKFILL
                )
                for _, a, low in w
            ]
        )
        checks = [
            (u, a, [int(s) for s in sids])
            for (u, a, _), sids in zip(wanted, posted, strict=True)
            if sids
        ]
        held = _read(
            lambda pipe, c=checks: [pipe.zmscore(keys.home(u), s) for u, _, s in c]
        )
        absent = [
            (u, a, [sid for sid, sc in zip(sids, scores, strict=True) if sc is None])
            for (u, a, sids), scores in zip(checks, held, strict=True)
        ]
        # A status whose fan-out job is still queued is on its way: one read for all.
        pending = iter(
            _queued(
                [
                    (keys.slot_of_user(a), services.fanout_job_id(a, sid))
                    for _, a, sids in absent
                    for sid in sids
                ]
            )
        )
        absent = [
            (u, a, [sid for sid in sids if not next(pending)]) for u, a, sids in absent
        ]
        # The rest, read (a status deleted meanwhile is not missing) and put to the
        # reply rule: one read for all.
        read = services.statuses_read(
            sorted({s for _, _, sids in absent for s in sids})
        )
        statuses = {status.id: status for status in read}
        for u, a, sids in absent:
            follows = {f: first_id_at(t) for f, t in following[u]}
            missing = [
                sid
                for sid in sids
                if sid in statuses and _reply_reaches(statuses[sid], u, follows)
            ]
            if missing:
                findings.missing.append((u, a, missing))
                findings.replies_to.update(
                    (sid, statuses[sid].reply_uid)
                    for sid in missing
                    if statuses[sid].reply_uid
                )


def _two_sided(findings: Findings, progress, forward, backward) -> dict:
    """Every pair (a, b) a two-sided relation records on either side, `forward`'s
    key of a holding b and `backward`'s key of b holding a (each side a pattern and
    a key builder), mapped to whether one side lacks it."""
    (_, forward_key), (_, backward_key) = forward, backward
    pairs: dict[tuple[int, int], bool] = {}
    for (pattern, key_of), flip in ((forward, False), (backward, True)):
        for batch in _owners(pattern, findings, progress):
            rows = _read(
                lambda pipe, b=batch, k=key_of: [pipe.zrange(k(u), 0, -1) for u in b]
            )
            found = [
                (int(m), u) if flip else (u, int(m))
                for u, row in zip(batch, rows, strict=True)
                for m in row
            ]
            other = _read(
                lambda pipe, f=found, flip=flip: [
                    pipe.zscore(forward_key(a), b)
                    if flip
                    else pipe.zscore(backward_key(b), a)
                    for a, b in f
                ]
            )
            for pair, score in zip(found, other, strict=True):
                pairs[pair] = pairs.get(pair, False) or score is None
    return pairs


def _check_blocks(
    findings: Findings, progress, following: dict[int, list[tuple[int, int]]]
) -> None:
    """One-sided blocks, and follows that survive a block."""
    # (blocker, blocked) -> one-sided
    pairs = _two_sided(
        findings,
        progress,
        (keys.blocks_pattern(), keys.blocks),
        (keys.blocked_by_pattern(), keys.blocked_by),
    )
    follows = {u: {a for a, _ in rows} for u, rows in following.items()}
    across = [
        (u, v, a)
        for a, b in pairs
        for u, v in ((a, b), (b, a))
        if v in follows.get(u, ())
    ]
    # A block change whose job is still queued is in progress, not a problem.
    busy = dict(
        zip(
            pairs,
            _queued(
                [(keys.slot_of_user(a), blocks.block_job_id(a, b)) for a, b in pairs]
            ),
            strict=True,
        )
    )
    findings.one_sided_blocks = sorted(
        pair for pair, one_sided in pairs.items() if one_sided and not busy[pair]
    )
    findings.follows_across_blocks = sorted(
        (u, v, a) for u, v, a in across if not busy[(a, v if a == u else u)]
    )


def _check_requests(findings: Findings, progress) -> None:
    """Follow requests recorded on one side only."""
    recorded = _two_sided(
        findings,
        progress,
        (keys.follow_requests_pattern(), keys.follow_requests),
        (keys.requested_pattern(), keys.requested),
    )
    # As (requester, owner).
    one_sided = {
        (r, o)
        for (o, r), lacking in recorded.items()
        if lacking and not {o, r} & findings.deleting
    }
    pairs = sorted(one_sided)
    busy = _queued(
        [(keys.slot_of_user(o), services.approval_job_id(o, r)) for r, o in pairs]
    )
    findings.one_sided_requests = [
        pair for pair, queued in zip(pairs, busy, strict=True) if not queued
    ]


def _check_private_in_global(findings: Findings) -> None:
    """Statuses of private accounts in the global timeline's partitions, and
    unlisted statuses (published there by a worker of a release before them)."""
    partitions = keys.global_partitions()
    rows = _read(lambda pipe: [pipe.zrange(p, 0, -1) for p in partitions])
    sids = sorted({int(s) for row in rows for s in row if s != "0"})
    rows = _read(
        lambda pipe: [pipe.hmget(keys.status(sid), Status.FIELDS) for sid in sids]
    )
    statuses = [
        Status.from_fields(sid, row) for sid, row in zip(sids, rows, strict=True)
    ]
    authors = [s.author_id if s is not None else None for s in statuses]
    ordered = sorted({a for a in authors if a is not None})
    private = _read(
        lambda pipe: [
            pipe.hexists(account_keys.user(a), User.PRIVATE_FIELD) for a in ordered
        ]
    )
    hidden = {a for a, p in zip(ordered, private, strict=True) if p}
    findings.private_in_global = [
        sid
        for sid, s, a in zip(sids, statuses, authors, strict=True)
        if s is not None
        and a is not None
        and (a in hidden or s.unlisted)
        and a not in findings.deleting
    ]


# One server. KEYS: a user's mutes (or list_exclusive), `muters`. ARGV: the user's
# uid. 1 when they mute someone (or have an exclusive list's member) and their bit is
# clear (read in one step: an unmute in between is no problem).
_MUTER_UNMARKED = LuaScript(
    """
if redis.call('EXISTS', KEYS[1]) == 1 and redis.call('GETBIT', KEYS[2], ARGV[1]) == 0
then return 1 end
return 0
"""
)


def _check_muters(findings: Findings, progress) -> None:
    """People with home skips (who mute someone, or have someone on an exclusive
    list) whose bit in one server's `muters` is clear."""
    if is_cluster():
        return
    unmarked: set[int] = set()
    for pattern, key in (
        (keys.mutes_pattern(), keys.mutes),
        (keys.list_exclusive_pattern(), keys.list_exclusive),
    ):
        for batch in _owners(pattern, findings, progress):
            found = _read(
                lambda pipe, batch=batch, key=key: [
                    _MUTER_UNMARKED.queue(pipe, keys=[key(u), keys.muters()], args=[u])
                    for u in batch
                ]
            )
            unmarked |= {u for u, f in zip(batch, found, strict=True) if f}
    findings.unmarked_muters = sorted(unmarked)


def _check_exclusive(findings: Findings, progress) -> None:
    """Owners whose `list_exclusive` differs from the members of their exclusive
    lists (both read in one script of their slot each)."""
    owners: set[int] = set()
    for pattern in (keys.lists_pattern(), keys.list_exclusive_pattern()):
        for batch in _owners(pattern, findings, progress):
            owners.update(batch)
    ordered = sorted(owners)
    for start in range(0, len(ordered), BATCH):
        batch = ordered[start : start + BATCH]

        replies = _read(
            lambda pipe, batch=batch: [
                lists.exclusive_check_queue(pipe, u) for u in batch
            ]
        )
        findings.exclusive_off += [
            u
            for u, reply in zip(batch, replies, strict=True)
            if not lists.exclusive_in_line(reply)
        ]


def _check_jobs(findings: Findings, stuck_after_s: float) -> None:
    slots = list(range(keys.CLUSTER_SLOTS))
    failed = _read(lambda pipe: [pipe.zrange(keys.job_failed(s), 0, -1) for s in slots])
    findings.failed_jobs = [
        (slot, jid) for slot, ids in zip(slots, failed, strict=True) for jid in ids
    ]
    findings.stuck_jobs = jobs.older_than(age_ms=int(stuck_after_s * 1000))


def timelines_check(
    *, stuck_after_s: float = 600, progress: Callable[[Findings], None] | None = None
) -> Findings:
    """Walk the store and report every problem of these kinds (writes nothing)."""
    findings = Findings()
    _check_deletions(findings, progress)
    following = _check_follows(findings, progress)
    _check_refs(findings, progress, following)
    _check_conversations(findings, progress)
    _check_homes(findings, following)
    _check_jobs(findings, stuck_after_s)
    _check_blocks(findings, progress, following)
    _check_requests(findings, progress)
    _check_private_in_global(findings)
    _check_muters(findings, progress)
    _check_exclusive(findings, progress)
    findings.counts = counts_recount(write=False)
    return findings


def timelines_repair(findings: Findings) -> None:
    """Fix what a check found; each fix is idempotent, so a repeat changes nothing."""
    for u, a in findings.one_sided:
        with services._FollowLock(u, wait=30.0):
            services.follow_sync(follower_id=u, followee_id=a)
    block_pairs = {*findings.one_sided_blocks}
    for u, v, blocker in findings.follows_across_blocks:
        block_pairs.add((blocker, v if blocker == u else u))
    for blocker, blocked in sorted(block_pairs):
        blocks.block_sync(blocker_id=blocker, blocked_id=blocked)
    for r, o in findings.one_sided_requests:
        # The truth read again, then the requester's side after it.
        since = get_redis().zscore(keys.follow_requests(o), r)
        if since is None:
            get_redis().zrem(keys.requested(r), o)
        else:
            get_redis().zadd(keys.requested(r), {o: int(since)})
    for u in findings.exclusive_off:
        lists.exclusive_sync(uid=u)
    if findings.unmarked_muters:
        # A bit set for someone who unmuted everyone meanwhile only makes the push
        # look at their mutes.
        pipeline_run(
            lambda pipe: [
                pipe.setbit(keys.muters(), u, 1) for u in findings.unmarked_muters
            ]
        )
    if findings.private_in_global:
        pipeline_run(
            lambda pipe: services.global_remove_queue(
                pipe, sids=findings.private_in_global
            )
        )

    def fix_timelines(pipe) -> None:
        for key, sids in findings.dead_refs.items():
            pipe.zrem(key, *sids)
        for u, a, sids in findings.missing:
            # Added as the fan-out adds them: a reply by the reply rule.
            by_target: dict[int | None, list[int]] = {}
            for sid in sids:
                by_target.setdefault(findings.replies_to.get(sid), []).append(sid)
            for to, group in by_target.items():
                services.homes_add_queue(
                    pipe, readers=[u], author_id=a, sids=group, reply_uid=to
                )

    if findings.dead_refs or findings.missing:
        pipeline_run(fix_timelines)  # one round trip (one request per node)
    for u, gone in findings.dead_messages.items():
        direct.conversations_forget(uid=u, gone=gone)
    # The jobs: queued again (due now), the workers woken, then each run here once.
    if findings.failed_jobs:
        jobs.failed_requeue()  # wakes the workers of each slot
    if findings.stuck_jobs:
        jobs.requeue(findings.stuck_jobs)
        pipeline_run(
            lambda pipe: [
                jobs.wake_queue(pipe, slot=slot)
                for slot in {slot for slot, _ in findings.stuck_jobs}
            ]
        )
    lost = [
        (keys.slot_of_user(u), services.account_job_id(u))
        for u in findings.unfinished_deletions
        if u not in findings.failed_deletions
    ]
    for slot, jid in lost:
        jobs.enqueue(slot=slot, jid=jid)  # wakes a worker
    _requeued_run([*findings.failed_jobs, *findings.stuck_jobs, *lost])
    # Last: the jobs run above may change what counts, and a reference removed from
    # an author's `posts` took a status out of their count. Either way the site's
    # sum is written now, not at the workers' next turn.
    posts = keys.posts_pattern()
    if findings.counts.problems() or any(
        keys.key_owner(key, posts) is not None for key in findings.dead_refs
    ):
        counts_recount(write=True)
    else:
        site_sum(claim=False)


def _requeued_run(pairs: list[tuple[int, str]]) -> None:
    """Run each of these jobs (slot, id), just queued again, at most once here.

    So the repair ends on a live site as on one without workers. A job a worker
    took first is left to it; one that raises waits for its retry and one that
    defers waits for the work it needs, both in the workers' hands (without
    workers, until one runs or the next repair); so does any job these queue. A
    claim takes a slot's earliest due job: one that was due before the repair's
    may run here too, never the traffic queued after them (due later).
    """
    by_slot: dict[int, set[str]] = {}
    for slot, jid in pairs:
        by_slot.setdefault(slot, set()).add(jid)
    for slot, waiting in sorted(by_slot.items()):
        while waiting:
            # Still due, so held by no worker and not waiting for a retry (one
            # round trip); the rest are out of this run's hands.
            ids = sorted(waiting)
            due = get_redis().zmscore(keys.job_queue(slot), ids)
            at = jobs.now_ms()
            waiting = {
                jid
                for jid, score in zip(ids, due, strict=True)
                if score is not None and score <= at
            }
            for job in jobs.claim(slot=slot, limit=1) if waiting else []:
                waiting.discard(job.id)
                fanout.job_run(job)
