"""Durable jobs (`timeline.jobs`): work queued again is never lost, and an id that
failed for good before runs afresh when a later change queues it again.

What a user sees: an author who crosses the push limit again just as their move
back to push ends is pulled all the same; an unfollow whose request died while the
follow's job was finishing still keeps the followee's new posts out of the home.
What an operator sees: a job queued again while a worker holds it runs again, from
the beginning, once that run ends; a home rebuild that once failed for good runs
the next time it is queued, and leaves the failed jobs.
"""

from __future__ import annotations

import threading
import time

import pytest
import redis

from config.pipelines import LuaScript, pipeline_run
from tests.helpers import make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import fanout, jobs, keys, services


def test_a_mode_change_that_starts_as_the_last_one_ends_is_not_lost(
    r, settings, monkeypatch
):
    settings.FANOUT_PUSH_MAX = 5  # pulled past 5 followers, pushed again below 4
    star = make_user("star")
    fans = [make_user(f"fan{i}") for i in range(6)]
    for fan in fans:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    for fan in fans[:3]:
        services.follow_delete(follower=fan, followee_id=star.id)
    assert r.get(keys.fanout_mode(star.id)) == "pushing"

    real = fanout.HANDLERS["mode"]

    def mode_then_follows(job):
        real(job)  # the move to push has ended (the mode key is gone)...
        # ...and before the worker's `done`, three people follow again (other
        # requests, other processes): past the limit, a move to pull starts.
        for fan in fans[:3]:
            services.follow_create(follower=fan, followee_id=star.id)

    monkeypatch.setitem(fanout.HANDLERS, "mode", mode_then_follows)
    run_jobs()
    monkeypatch.setitem(fanout.HANDLERS, "mode", real)
    run_jobs(sweep=True)
    # 6 followers > FANOUT_PUSH_MAX: the move to pull ran to its end, and every
    # follower's home merges the author's outbox (none is left half-moved).
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    assert all(r.zscore(keys.pulls(fan.id), star.id) is not None for fan in fans)
    slot = keys.slot_of_user(star.id)
    assert jobs.queued_ids(slot=slot, prefix="mode:") == []


def test_an_unfollow_cut_short_while_its_follow_job_runs_is_completed(
    r, settings, monkeypatch
):
    alice, bob = make_user("alice"), make_user("bob")
    # A follow request that died after its first step: the truth and the job.
    services._follow_set(bob.id, alice.id, jobs.now_ms() * 1000)
    later = jobs.now_ms() + (settings.JOB_FOLLOW_GRACE_SECONDS + 1) * 1000

    real = fanout.HANDLERS["follow"]

    def follow_then_unfollow(job):
        real(job)  # the follow completed (under bob's lock, now released)...
        # ...and before the worker's `done`, bob unfollows; that request dies
        # right after its first step (the truth, and the job that completes it).
        with services._FollowLock(bob.id):
            services._follow_set(bob.id, alice.id, None)

    monkeypatch.setitem(fanout.HANDLERS, "follow", follow_then_unfollow)
    run_jobs(sweep=True, now=later)
    monkeypatch.setitem(fanout.HANDLERS, "follow", real)
    later += (settings.JOB_FOLLOW_GRACE_SECONDS + 1) * 1000
    run_jobs(sweep=True, now=later)
    assert r.zscore(keys.following(bob.id), alice.id) is None
    status = services.status_create(author=alice, text="after bob unfollowed")
    run_jobs()
    # bob does not follow alice: her new status must not reach his home.
    assert r.zscore(keys.home(bob.id), status.id) is None
    assert r.zscore(keys.followers(alice.id), bob.id) is None


def test_a_job_queued_again_while_held_runs_again_from_the_beginning(r):
    uid = make_user("reader").id
    slot, jid = keys.slot_of_user(uid), services.home_rebuild_job_id(uid)
    jobs.enqueue(slot=slot, jid=jid)
    (held,) = jobs.claim(slot=slot, limit=1)
    jobs.progress(held, cursor="halfway")
    jobs.enqueue(slot=slot, jid=jid)  # new work, while the worker still runs
    assert jobs.done(held)
    # The run that ended may have read the state before the new work was asked
    # for: the job stays, due, and its next run starts from the beginning.
    (again,) = jobs.claim(slot=slot, limit=1)
    assert (again.id, again.cursor, again.attempts) == (jid, "0", 1)
    assert jobs.done(again)
    assert jobs.queued_ids(slot=slot, prefix="") == []
    assert jobs.stats().depth == 0


def test_a_job_queued_again_while_it_waits_for_a_retry_starts_over(r):
    uid = make_user("reader").id
    slot, jid = keys.slot_of_user(uid), services.home_rebuild_job_id(uid)
    jobs.enqueue(slot=slot, jid=jid)
    (held,) = jobs.claim(slot=slot, limit=1)
    jobs.progress(held, cursor="halfway")
    jobs.retry_later(held, error="RuntimeError('a node failing over')")
    jobs.enqueue(slot=slot, jid=jid)
    (again,) = jobs.claim(slot=slot, limit=1, now=jobs.now_ms() + 3_600_000)
    assert again.cursor == "0"
    assert again.attempts == 2  # the same job, still failing: its retries count


def test_a_job_queued_again_after_an_earlier_failure_runs(r, settings, monkeypatch):
    settings.JOB_MAX_ATTEMPTS = 2
    reader = make_user("reader")
    slot = keys.slot_of_user(reader.id)
    jid = services.home_rebuild_job_id(reader.id)

    def broken(job):
        raise RuntimeError("Redis node failing over")

    monkeypatch.setitem(fanout.HANDLERS, "home", broken)
    jobs.enqueue(slot=slot, jid=jid)
    later = jobs.now_ms()
    for _ in range(settings.JOB_MAX_ATTEMPTS + 1):
        later += (settings.JOB_RETRY_MAX_SECONDS + 1) * 1000
        run_jobs(sweep=True, now=later)
    assert jid in jobs.failed_ids()
    # Weeks later the reader is away and back again: a new rebuild is queued.
    ran = []
    monkeypatch.setitem(
        fanout.HANDLERS, "home", lambda job: ran.append(job) or fanout.run_home(job)
    )
    jobs.enqueue(slot=slot, jid=jid)
    run_jobs(sweep=True, now=later + 1)
    assert [(job.cursor, job.attempts) for job in ran] == [("0", 1)], (
        "the new rebuild went straight to the failed jobs without running"
    )
    stats = jobs.stats()
    assert (stats.depth, stats.failed, stats.failed_ids) == (0, 0, [])


def test_a_failure_dropped_past_the_cap_leaves_its_id_queued_anew_intact(r, settings):
    settings.JOB_MAX_ATTEMPTS, settings.JOB_FAILED_CAP = 1, 1
    settings.JOB_LEASE_SECONDS = 0  # a lease runs out at once: no waiting here
    uid = make_user("reader").id
    slot = keys.slot_of_user(uid)
    # `home:` sorts before `suggest:`, so when both are due at the same ms the
    # claim takes `home:` first.
    first, second = jobs.job_id("suggest", uid), services.home_rebuild_job_id(uid)

    jobs.enqueue(slot=slot, jid=first)
    ((_, due),) = jobs.queued_ids(slot=slot, prefix=first)
    assert [job.id for job in jobs.claim(slot=slot, limit=1, now=due)] == [first]
    # Its lease ran out: claimed again, past the limit, it fails for good.
    assert jobs.claim(slot=slot, limit=1, now=due) == []
    assert jobs.failed_ids() == [first]
    jobs.enqueue(slot=slot, jid=second)
    ((_, due),) = jobs.queued_ids(slot=slot, prefix=second)
    assert [job.id for job in jobs.claim(slot=slot, limit=1, now=due)] == [second]
    jobs.enqueue(slot=slot, jid=first)  # queued anew, due no earlier than `second`
    assert jobs.claim(slot=slot, limit=1, now=due) == []  # `second` failed for good
    # Its failure pushed the first one's out of the capped list, and not the new
    # `first` job's bookkeeping with it: the operator still sees how long it waits.
    assert jobs.failed_ids() == [second]
    stats = jobs.stats()
    assert stats.depth == 1
    assert stats.oldest_age_s is not None


def test_the_sweep_finds_every_slot_with_a_due_job_and_no_other(r):
    # The sweep is how a worker finds a job whose wake-up call was lost, a retry
    # whose backoff ran out, or a dead worker's lease: every one of the 16,384 slot
    # queues is read, from the first slot to the last, and a job not yet due is
    # left until it is. (On a 3-master Cluster, 5460 | 5461 and 10922 | 10923 are
    # where one node's slots end and the next one's begin.)
    due_now = [0, 1, 1023, 1024, 5460, 5461, 8191, 10922, 10923, 16383]
    for slot in due_now:
        jobs.enqueue(slot=slot, jid=f"post:1:{slot}")
    jobs.enqueue(slot=5000, jid="post:1:5000")
    (held,) = jobs.claim(slot=5000, limit=1)
    later = jobs.now_ms() + 60_000
    jobs.defer(held, due=later)
    assert jobs.due_slots() == due_now
    assert jobs.due_slots(now=later) == sorted([*due_now, 5000])
    for slot in due_now:
        (job,) = jobs.claim(slot=slot, limit=1)
        assert jobs.done(job)
    assert jobs.due_slots() == []
    assert jobs.due_slots(now=later) == [5000]


def _move_slot(r, slot: int, source, target) -> None:
    """Move an empty slot from one master to another, as a resharding does."""
    ids = {
        node.name: node.redis_connection.execute_command("CLUSTER", "MYID")
        for node in r.get_primaries()
    }
    src, dst = source.redis_connection, target.redis_connection
    dst.execute_command("CLUSTER", "SETSLOT", slot, "IMPORTING", ids[source.name])
    src.execute_command("CLUSTER", "SETSLOT", slot, "MIGRATING", ids[target.name])
    for node in sorted(r.get_primaries(), key=lambda n: n is not target):
        node.redis_connection.execute_command(
            "CLUSTER", "SETSLOT", slot, "NODE", ids[target.name]
        )


@pytest.mark.cluster
def test_the_sweep_finds_due_jobs_in_a_slot_that_moved(r, monkeypatch):
    # A resharding moved a slot since this worker last grouped the slots by node,
    # and a command of its own since learned the slot's new place (redis-py
    # edits its map in place). The sweep still finds every due job, there and
    # elsewhere; the node that no longer serves the slot is read queue by queue
    # once, and the next sweep reads every node by script again.
    jobs.due_slots()  # the slots grouped by node
    by_queue = []
    real = jobs._due_by_command
    monkeypatch.setattr(
        jobs, "_due_by_command", lambda slots, at: by_queue.append(1) or real(slots, at)
    )
    first, second, *_ = sorted(r.get_primaries(), key=lambda node: node.name)
    served = r.nodes_manager.slots_cache.items()
    moved = next(slot for slot, nodes in served if nodes[0] is first)
    elsewhere = next(slot for slot, nodes in served if nodes[0] is second)
    _move_slot(r, moved, first, second)
    try:
        r.zcard(keys.job_queue(moved))  # MOVED: redis-py's map now says `second`
        for slot in (moved, elsewhere):
            jobs.enqueue(slot=slot, jid=f"post:1:{slot}")
        assert jobs.due_slots() == sorted([moved, elsewhere])
        assert by_queue == [1]
        assert jobs.due_slots() == sorted([moved, elsewhere])
        assert by_queue == [1]
    finally:
        r.delete(keys.job_queue(moved), keys.job_data(moved))
        _move_slot(r, moved, second, first)
        r.nodes_manager.initialize()


@pytest.mark.cluster
def test_a_sweep_reads_every_node_by_script_while_the_slot_map_holds(r, monkeypatch):
    # Queue by queue is only for a node whose slots moved: it costs a worker
    # about 35 times the CPU (docs/BENCHMARKS.md).
    monkeypatch.setattr(jobs, "_due_by_command", lambda slots, at: pytest.fail())
    jobs.enqueue(slot=0, jid="post:1:0")
    assert jobs.due_slots() == [0]


@pytest.mark.real_redis
@pytest.mark.single_server
def test_a_plain_posts_job_costs_its_worker_five_round_trips(r):
    # A status with no tag, by a public author with a few followers: the worker
    # leases the job, reads the status with its author's privacy and mode, adds it
    # to the global timeline, writes the homes, and marks the job done. Every post
    # pays these, beside the pages on the same cores.
    author = make_user("author")
    readers = [make_user(f"reader{n}") for n in range(3)]
    for reader in readers:
        services.follow_create(follower=reader, followee_id=author.id)
    run_jobs()
    services.status_create(author=author, text="warm")
    run_jobs()
    status = services.status_create(author=author, text="plain")
    slot = keys.slot_of_user(author.id)
    with RoundTripCounter() as counter:
        (job,) = jobs.claim(slot=slot, limit=1)
        assert fanout.job_run(job)
    assert counter.count == 5
    assert r.zscore(keys.home(readers[2].id), status.id) is not None


@pytest.mark.real_redis
def test_an_idle_workers_wake_up_calls_reach_it_and_a_late_one_stays_for_others(r):
    # A Cluster's idle worker waits on every wake-up shard, a thread each (one
    # blocking pop cannot wait on shards of different nodes). A call queued while
    # it waits reaches it and leaves the shard; a call its thread takes just as
    # the worker went busy is put back, as it was, for another worker to take.
    stop = threading.Event()
    listeners = fanout.ShardListeners(stop, wait=0.5)
    try:
        slot = 4242
        shard = keys.job_ready(slot)
        queued = jobs.now_ms()
        r.zadd(shard, {slot: queued})
        assert listeners.wait(5.0) == {slot}
        assert r.zcard(shard) == 0

        listeners.hand_over(shard, slot, queued)  # the worker is not waiting
        # (Its threads still waiting may take it again, and put it back again.)
        time.sleep(0.6)  # every thread's wait has ended
        assert r.zscore(shard, slot) == queued
        assert jobs.wakeups_pop() == [slot]
        assert listeners.wait(0.2) == set()  # nothing was left for it
    finally:
        stop.set()
        listeners.close()


@pytest.mark.fake_redis
def test_listeners_that_lose_their_node_pause_together_and_say_so_once(
    monkeypatch, caplog
):
    # A node stops answering: the 16 threads of an idle worker find it, and the
    # operator reads one line, not sixteen a second; none asks again for a second.
    asked = []

    def down(shard, *, timeout):
        asked.append(time.monotonic())
        raise redis.ConnectionError("node down")

    monkeypatch.setattr(jobs, "shard_wait", down)
    stop = threading.Event()
    listeners = fanout.ShardListeners(stop, wait=0.2)
    try:
        with caplog.at_level("WARNING", logger="timeline.fanout"):
            listeners.idle.set()
            time.sleep(0.6)
        warned = [r for r in caplog.records if "no wake-up calls" in r.getMessage()]
        assert len(warned) == 1
        assert 1 <= len(asked) <= keys.JOB_READY_SHARDS
        assert max(asked) - min(asked) < 0.3  # all in the first moment, then paused
    finally:
        listeners.idle.clear()
        stop.set()
        listeners.close()


@pytest.mark.real_redis
def test_a_worker_stopped_with_a_wake_up_call_in_hand_announces_it_again(
    r, monkeypatch
):
    # An idle worker takes a wake-up call just as it is told to stop: the call is
    # back in its shard for another worker, not left to the next sweep.
    worker = fanout.Worker()
    waiting = threading.Event()
    real_idle = fanout.Worker._idle

    def idle_then_stop(self, until):
        waiting.set()
        got = real_idle(self, until)
        if got:
            self.stop.set()  # SIGTERM, as the call came
        return got

    monkeypatch.setattr(fanout.Worker, "_idle", idle_then_stop)
    thread = threading.Thread(target=worker.run)
    thread.start()
    try:
        assert waiting.wait(10)
        slot = 4242
        r.zadd(keys.job_ready(slot), {slot: jobs.now_ms()})
        thread.join(10)
        assert not thread.is_alive()
        assert r.zscore(keys.job_ready(slot), slot) is not None
    finally:
        worker.stop.set()
        thread.join(10)


# A request's own step queuing a job, with the request's nonce (as a like does).
_ENQUEUE_OWNED = LuaScript(
    jobs.ENQUEUE
    + """
enqueue(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[2], ARGV[3])
return 1
"""
)


def test_a_request_takes_back_only_its_own_job_and_only_while_nobody_else_needs_it(
    r,
):
    # A like's request queues the like's job and, once it has done the job's work
    # itself, takes it back. It leaves it where another request queued it anew
    # (an unlike that found no like, whose next steps still run), where another
    # change queued it again meanwhile (an unlike whose request may have died
    # before its own part), or once a worker took it (its run may have read the
    # state before the request's change, and a failed run is owed its retry).
    slot, jid = 77, "like:1:2"

    def queue(owner: str) -> None:
        _ENQUEUE_OWNED(keys=jobs.slot_keys(slot), args=[jid, jobs.now_ms(), owner])

    def take_back(owner: str) -> None:
        pipeline_run(
            lambda pipe: jobs.cancel_unless_again_queue(
                pipe, slot=slot, jid=jid, owner=owner
            )
        )

    def queued() -> list[str]:
        return [i for i, _ in jobs.queued_ids(slot=slot, prefix="like:")]

    queue("mine")
    take_back("mine")
    assert queued() == []
    assert r.hlen(keys.job_data(slot)) == 0  # its bookkeeping went with it

    queue("theirs")
    take_back("mine")
    assert queued() == [jid]
    take_back("theirs")

    queue("mine")
    queue("theirs")  # the other change
    take_back("mine")
    assert queued() == [jid]
    (held,) = jobs.claim(slot=slot, limit=1)
    assert jobs.done(held)  # the run owed
    queue("mine")
    (held,) = jobs.claim(slot=slot, limit=1, now=jobs.now_ms() + 1)
    take_back("mine")
    assert queued() == [jid]
    jobs.retry_later(held, error="the author's node did not answer")
    take_back("mine")  # its run failed: the retry is owed
    assert queued() == [jid]
