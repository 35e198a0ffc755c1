"""Nothing stays half-done: a fan-out survives its worker being killed, Redis being
restarted from its AOF and a Cluster master failing over, each in the middle of a
job; an unfollow cut short by an outage is completed by its job.

The workers here are real `manage.py fanout_worker` processes; the servers are real.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import redis

from accounts.services import seen_stamp_queue
from config.embedded import start_server
from config.pipelines import pipeline_run
from config.redis import client_for_url, get_redis, set_redis
from tests.helpers import logged_in_client, make_user, run_jobs
from timeline import jobs, keys, services
from timeline.upgrades import layout_stamp

ROOT = Path(__file__).resolve().parents[2]
FOLLOWERS = 3000


def add_followers(author_id: int, count: int, first: int = 10_000) -> list[int]:
    """Make `count` active readers follow the author (written as a follow writes
    them, with the stamp of a reader seen today)."""
    uids = list(range(first, first + count))
    for start in range(0, count, 500):

        def link(pipe, chunk=uids[start : start + 500]) -> None:
            for uid in chunk:
                pipe.zadd(keys.following(uid), {author_id: 1})
                pipe.zadd(keys.followers(author_id), {uid: 1})
                seen_stamp_queue(pipe, uid=uid)

        pipeline_run(link)
    return uids


def homes_holding(sid: int, uids: list[int]) -> int:
    replies = pipeline_run(
        lambda pipe: [pipe.zscore(keys.home(u), sid) for u in uids], confirm=False
    )
    return sum(reply is not None for reply in replies)


def start_worker(
    url: str, *, cluster: bool = False, sweep_seconds: float = 0.5
) -> subprocess.Popen:
    """A real worker process, with a short lease so that a dead one is soon replaced
    and small batches so that a job has many steps to be cut between."""
    layout_stamp(get_redis())  # as a store the site made is: the worker checks it
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "REDIS_URL": url,
        "REDIS_CLUSTER": "true" if cluster else "false",
        "JOB_LEASE_SECONDS": "1",
        "JOB_SWEEP_SECONDS": str(sweep_seconds),
        "FANOUT_BATCH": "50",
        "FANOUT_GROUP": "50",
        "REDIS_SOCKET_TIMEOUT": "1",
    }
    return subprocess.Popen(
        [sys.executable, "manage.py", "fanout_worker"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def stop_worker(proc: subprocess.Popen) -> None:
    """Stop a worker; what it logged is printed (pytest shows it when a test fails)."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    print(proc.stderr.read().decode(errors="replace")[-3000:])


def wait_for(predicate, *, timeout: float, what: str):
    deadline = time.monotonic() + timeout
    while True:
        try:
            value = predicate()
        except (redis.RedisError, redis.exceptions.RedisClusterException):
            value = None  # the server is still coming back
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def job_cursor(r, author_id: int, sid: int) -> str | None:
    slot = keys.slot_of_user(author_id)
    jid = services.fanout_job_id(author_id, sid)
    return r.hget(keys.job_data(slot), f"{jid}#c")


def mid_job(r, author_id: int, sid: int) -> bool:
    return job_cursor(r, author_id, sid) not in (None, "0")


def queues_empty() -> bool:
    stats = jobs.stats()
    return stats.depth == 0 and stats.failed == 0


@pytest.fixture
def store_url(request, redis_backend):
    if redis_backend == "cluster":
        return request.getfixturevalue("local_cluster").url, True
    return request.getfixturevalue("real_redis_url"), False


@pytest.mark.real_redis
def test_a_worker_killed_mid_job_is_resumed_by_another(r, store_url):
    url, cluster = store_url
    author = make_user("author")
    readers = add_followers(author.id, FOLLOWERS)
    first = start_worker(url, cluster=cluster)
    second = None
    try:
        status = services.status_create(author=author, text="to 3,000 homes")
        wait_for(lambda: mid_job(r, author.id, status.id), timeout=30, what="a step")
        first.send_signal(signal.SIGSTOP)  # frozen where it was, then killed
        reached = homes_holding(status.id, readers)
        assert 0 < reached < FOLLOWERS, "the worker was not stopped mid-job"
        first.kill()
        first.wait()
        second = start_worker(url, cluster=cluster)
        wait_for(
            lambda: homes_holding(status.id, readers) == FOLLOWERS,
            timeout=60,
            what="every home",
        )
        wait_for(queues_empty, timeout=30, what="the job to be done")
    finally:
        first.kill()
        if second is not None:
            stop_worker(second)
    # Once each: the resumed steps wrote again what the dead worker had written.
    assert r.zrange(keys.home(readers[0]), 0, -1) == [str(status.id)]


@pytest.mark.single_server
def test_redis_restarted_from_its_aof_mid_job_loses_nothing(settings):
    directory = Path(tempfile.mkdtemp(prefix="retwis-aof-"))
    aof = ["--appendonly", "yes", "--appendfsync", "always"]
    url, server = start_server(directory, persist=False, daemonize=False, extra=aof)
    client = client_for_url(url, cluster=False)
    set_redis(client)
    worker = None
    try:
        author = make_user("author")
        readers = add_followers(author.id, FOLLOWERS)
        worker = start_worker(url)
        status = services.status_create(author=author, text="survives a restart")
        wait_for(lambda: mid_job(client, author.id, status.id), timeout=30, what="step")
        server.kill()  # as a crash: no shutdown, no snapshot; the AOF is what is left
        server.wait()
        again, server = start_server(
            directory, persist=False, daemonize=False, extra=aof
        )
        assert again == url
        reached = homes_holding(status.id, readers)
        assert 0 < reached < FOLLOWERS, "Redis was not restarted mid-job"
        wait_for(
            lambda: homes_holding(status.id, readers) == FOLLOWERS,
            timeout=60,
            what="every home",
        )
        wait_for(queues_empty, timeout=30, what="the job to be done")
        assert client.zscore(keys.posts(author.id), status.id) is not None
    finally:
        if worker is not None:
            stop_worker(worker)
        client.close()
        server.kill()
        server.wait()
        shutil.rmtree(directory, ignore_errors=True)


@pytest.mark.cluster
def test_a_master_failing_over_mid_job_loses_nothing(settings):
    from tests.cluster import start_cluster

    cluster = start_cluster(masters=3, replicas_per_master=1, node_timeout_ms=2000)
    client = client_for_url(cluster.url, cluster=True)
    set_redis(client)
    worker = None
    try:
        author = make_user("author")
        readers = add_followers(author.id, FOLLOWERS)
        cluster.wait_replicas_synced()
        worker = start_worker(cluster.url, cluster=True)
        status = services.status_create(author=author, text="survives a failover")
        wait_for(lambda: mid_job(client, author.id, status.id), timeout=30, what="step")
        # The master of the author's slot: it holds the job and its cursor.
        owner = client.get_node_from_key(keys.posts(author.id))
        victim = next(n for n in cluster.primaries() if n.port == owner.port)
        victim.kill()
        deadline = time.monotonic() + 30
        while len(cluster.primaries()) < cluster.masters:
            assert time.monotonic() < deadline, "no replica was promoted"
            time.sleep(0.1)
        cluster.wait_ok(timeout=30)
        wait_for(
            lambda: homes_holding(status.id, readers) == FOLLOWERS,
            timeout=60,
            what="every home",
        )
        wait_for(queues_empty, timeout=30, what="the job to be done")
    finally:
        if worker is not None:
            stop_worker(worker)
        client.close()
        cluster.stop()


@pytest.mark.real_redis
def test_an_unfollow_cut_short_by_an_outage_is_completed_by_its_job(
    r, monkeypatch, settings
):
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    made = [services.status_create(author=alice, text=f"a{i}").id for i in range(200)]
    run_jobs()
    assert r.zcard(keys.home(bob.id)) == 200

    def outage(**kwargs):
        raise redis.ConnectionError("Redis stopped answering")

    monkeypatch.setattr(services, "_follow_sync", outage)  # what the request runs
    answer = logged_in_client("bob").post("/u/alice/unfollow/")
    assert answer.status_code == 503
    assert "may not have been saved" in answer.content.decode()
    monkeypatch.undo()
    # Half-done for now: bob no longer follows alice, her statuses are still there.
    assert r.zscore(keys.following(bob.id), alice.id) is None
    assert r.zcard(keys.home(bob.id)) == 200
    # Until the job's grace period ends (the request might still finish it itself).
    assert run_jobs(sweep=True) == 0
    later = jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1
    assert run_jobs(now=later, sweep=True) == 1
    assert not {str(s) for s in made} & set(r.zrange(keys.home(bob.id), 0, -1))
    assert r.zscore(keys.followers(alice.id), bob.id) is None
    assert r.hget(keys.follower_names(alice.id), bob.id) is None
    assert jobs.stats().depth == 0
    page = logged_in_client("bob").get("/")
    assert "a199" not in page.content.decode()


def test_a_job_that_keeps_failing_is_kept_visible_and_runs_again_on_repair(
    r, monkeypatch, settings
):
    from timeline import fanout

    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    status = services.status_create(author=alice, text="unlucky")

    def broken(job):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setitem(fanout.HANDLERS, "post", broken)
    later = jobs.now_ms()
    for _ in range(settings.JOB_MAX_ATTEMPTS + 1):
        later += (settings.JOB_RETRY_MAX_SECONDS + 1) * 1000
        run_jobs(now=later, sweep=True)
    stats = jobs.stats()
    assert (stats.depth, stats.failed) == (0, 1)
    assert stats.failed_ids == [services.fanout_job_id(alice.id, status.id)]
    monkeypatch.undo()
    assert jobs.failed_requeue() == 1
    assert run_jobs() == 1
    assert r.zscore(keys.home(bob.id), status.id) is not None
    assert queues_empty()


def test_the_worker_command_shows_the_queues_to_an_operator(r):
    import io

    from django.core.management import call_command

    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()  # the follow's own (bob's suggestions: `timeline.suggestions`)
    services.status_create(author=alice, text="waiting for a worker")
    out = io.StringIO()
    call_command("fanout_worker", "--stats", stdout=out)
    assert out.getvalue().startswith("queued 1 (held by workers 0), oldest ")
    assert out.getvalue().rstrip().endswith("failed 0")
    run_jobs()
    out = io.StringIO()
    call_command("fanout_worker", "--stats", stdout=out)
    assert out.getvalue().strip() == "queued 0 (held by workers 0), oldest -, failed 0"


def test_a_failing_job_waits_longer_after_each_attempt(r, monkeypatch, settings):
    from timeline import fanout

    settings.JOB_RETRY_MAX_SECONDS = 3600
    alice = make_user("alice")
    status = services.status_create(author=alice, text="flaky")
    monkeypatch.setitem(fanout.HANDLERS, "post", lambda job: 1 / 0)
    clock = [jobs.now_ms()]
    monkeypatch.setattr(jobs, "now_ms", lambda: clock[0])  # the jobs' own clock
    queue = keys.job_queue(keys.slot_of_user(alice.id))
    jid = services.fanout_job_id(alice.id, status.id)
    waits = []
    for _ in range(4):
        clock[0] = int(r.zscore(queue, jid)) + 1  # just after it is due again
        run_jobs(now=clock[0], sweep=True)
        waits.append((r.zscore(queue, jid) - clock[0]) / 1000)
    assert waits == [2, 4, 8, 16]
    data = keys.job_data(keys.slot_of_user(alice.id))
    assert "ZeroDivisionError" in r.hget(data, f"{jid}#e")


def published_directly(author, count: int, readers: list[int], newest: int) -> list:
    """`count` statuses of the author, written as posts and fan-outs leave them (the
    global timeline, the author's posts, the newest in every reader's home)."""
    from timeline.domain import Status
    from timeline.ids import status_ids_take

    sids = status_ids_take(author_id=author.id, count=count)

    def write(pipe) -> None:
        for sid in sids:
            status = Status(
                id=sid, author_id=author.id, author=author.username, text="x", created=1
            )
            pipe.hset(keys.status(sid), mapping=status.to_hash())
            pipe.zadd(keys.posts(author.id), {sid: sid})
        services.global_add_queue(pipe, sids=sids)

    pipeline_run(write)
    for start in range(0, len(readers), 500):
        pipeline_run(
            lambda pipe, chunk=readers[start : start + 500]: [
                pipe.zadd(keys.home(u), {sid: sid for sid in sids[-newest:]})
                for u in chunk
            ]
        )
    return sids


@pytest.mark.real_redis
@pytest.mark.single_server
def test_an_account_deletion_survives_its_worker_being_killed(r, store_url):
    url, _ = store_url
    alice = make_user("alice")
    followers = add_followers(alice.id, FOLLOWERS)
    # She follows a thousand of them back (written as a follow writes them).
    for start in range(0, 1000, 500):
        pipeline_run(
            lambda pipe, s=start: [
                (
                    pipe.zadd(keys.following(alice.id), {u: 1}),
                    pipe.zadd(keys.followers(u), {alice.id: 1}),
                    pipe.hset(keys.follower_names(u), alice.id, "alice"),
                )
                for u in followers[s : s + 500]
            ]
        )
    followees = followers[:1000]
    sids = published_directly(alice, 2000, followers, newest=20)
    services.account_close(user=alice)
    slot = keys.slot_of_user(alice.id)
    jid = services.account_job_id(alice.id)
    first = start_worker(url)
    second = None
    try:
        wait_for(
            lambda: (r.hget(keys.job_data(slot), f"{jid}#c") or "").startswith("f "),
            timeout=30,
            what="the walk of her followers",
        )
        first.send_signal(signal.SIGSTOP)
        ended = sum(
            score is None
            for score in pipeline_run(
                lambda pipe: [
                    pipe.zscore(keys.following(u), alice.id) for u in followers
                ]
            )
        )
        assert 0 < ended < FOLLOWERS, "the worker was not stopped mid-job"
        first.kill()
        first.wait()
        second = start_worker(url)
        wait_for(queues_empty, timeout=60, what="the job to be done")
    finally:
        first.kill()
        if second is not None:
            stop_worker(second)
    assert sorted(k for k in r.scan_iter() if f"{{{alice.id}}}" in k) == []
    gone = {str(s) for s in sids}
    homes = pipeline_run(
        lambda pipe: [pipe.zrange(keys.home(u), 0, -1) for u in followers],
        confirm=False,
    )
    assert not any(gone & set(home) for home in homes)
    followed = pipeline_run(
        lambda pipe: [pipe.zscore(keys.followers(u), alice.id) for u in followees],
        confirm=False,
    )
    assert followed == [None] * len(followees)
    assert not any(r.exists(keys.status(s)) for s in sids[:50])
    assert not any(gone & set(r.zrange(p, 0, -1)) for p in keys.global_partitions())


@pytest.mark.real_redis
def test_an_idle_worker_runs_a_post_on_its_wake_up_call_and_stops_on_sigterm(
    r, store_url
):
    # With no sweep due for an hour, only the post's wake-up call can bring its
    # job to an idle worker. The idle worker waits on the wake-up shards (an
    # operator sees it among Redis's blocked clients: one on one server, one per
    # shard on a Cluster, whose shards lie on different nodes) rather than asking
    # them fifty times a second; a stop still comes within its bounded wait.
    url, cluster = store_url
    author = make_user("author")
    readers = add_followers(author.id, 20)
    worker = start_worker(url, cluster=cluster, sweep_seconds=3600)
    servers = [n.redis_connection for n in r.get_primaries()] if cluster else [r]
    try:
        wait_for(
            lambda: (
                sum(s.info("clients")["blocked_clients"] for s in servers)
                == (keys.JOB_READY_SHARDS if cluster else 1)
            ),
            timeout=30,
            what="the worker to wait for a wake-up call",
        )
        status = services.status_create(author=author, text="woken")
        wait_for(
            lambda: homes_holding(status.id, readers) == 20,
            timeout=10,
            what="every home",
        )
        wait_for(queues_empty, timeout=10, what="the job to be done")
        asked = time.monotonic()
        worker.send_signal(signal.SIGTERM)
        assert worker.wait(timeout=10) == 0
        assert time.monotonic() - asked < 3
    finally:
        stop_worker(worker)
