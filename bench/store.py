"""Figures read from the store itself: memory per item, fan-out against plain ZADD.

Needs Django set up on the bench's own Redis (`bench/run.py` does it).
"""

from __future__ import annotations

import csv
import os
import shutil
import statistics
import subprocess
import time
from pathlib import Path


def _info(section: str) -> list[dict]:
    """INFO of the server, or of every master of a cluster."""
    import redis

    from config.redis import get_redis, is_cluster

    r = get_redis()
    if is_cluster(r):
        return list(r.info(section, target_nodes=redis.RedisCluster.PRIMARIES).values())
    return [r.info(section)]


def redis_version() -> str:
    return _info("server")[0]["redis_version"]


def redis_forks() -> int:
    """How many child processes the server (every master) has forked so far: an RDB
    snapshot or an AOF rewrite each, whose child serializes the whole dataset and
    takes a core while it runs."""
    return sum(int(info["total_forks"]) for info in _info("stats"))


def persistence_settled(timeout: float = 300) -> None:
    """Rewrite the AOF now (on every master that keeps one) and wait until no
    snapshot nor rewrite runs. A benchmark's own setup (hundreds of thousands of
    writes) is not the workload it measures: without this, its writes fork an AOF
    rewrite inside the windows it times (`redis_forks` counts any that still do)."""
    import redis

    from config.redis import get_redis, is_cluster

    r = get_redis()
    if not any(int(info["aof_enabled"]) for info in _info("persistence")):
        return
    # Each master on its own (redis-py routes BGREWRITEAOF to no node of a Cluster).
    servers = [n.redis_connection for n in r.get_primaries()] if is_cluster(r) else [r]
    for server in servers:
        try:
            server.bgrewriteaof()
        except redis.ResponseError as error:
            if "already in progress" not in str(error):
                raise  # one the server started by itself: waited for below
    deadline = time.monotonic() + timeout
    busy = (
        "aof_rewrite_in_progress",
        "aof_rewrite_scheduled",
        "rdb_bgsave_in_progress",
    )
    while any(int(info[f]) for info in _info("persistence") for f in busy):
        if time.monotonic() > deadline:
            raise RuntimeError(f"Redis still rewriting its AOF after {timeout:.0f} s")
        time.sleep(0.1)


def redis_cpu_seconds() -> float:
    """CPU time the server (every master) has used so far (user + system)."""
    return sum(
        float(info["used_cpu_user"]) + float(info["used_cpu_sys"])
        for info in _info("cpu")
    )


def memory(*, users: int, statuses_per_user: int) -> dict:
    """MEMORY USAGE of a sample of each kind of key, per item."""
    from accounts import keys as account_keys
    from config.redis import get_redis
    from timeline import keys

    r = get_redis()
    sample = list(range(1, users + 1, max(1, users // 500)))

    def usage(key_list: list[str]) -> int:
        pipe = r.pipeline(transaction=False)
        for key in key_list:
            pipe.memory_usage(key, samples=0)
        return sum(u or 0 for u in pipe.execute())

    def sizes(key_list: list[str]) -> int:
        pipe = r.pipeline(transaction=False)
        for key in key_list:
            pipe.zcard(key)
        return sum(pipe.execute())

    # Seeded users are named user<id> (timeline.seeding).
    user_bytes = usage([account_keys.user(u) for u in sample]) + usage(
        [account_keys.username(f"user{u}") for u in sample]
    )
    # Status ids are sparse (timeline/ids.py): sample them from the authors' posts.
    sids = [int(sid) for u in sample[:100] for sid in r.zrange(keys.posts(u), 0, 4)][
        :500
    ]
    status_bytes = usage([keys.status(s) for s in sids])
    posts_keys = [keys.posts(u) for u in sample]
    # Both sides of an edge: following, followers and the follower's name.
    edge_keys = [
        key(u)
        for u in sample
        for key in (keys.following, keys.followers, keys.follower_names)
    ]
    home_keys = [keys.home(u) for u in sample]
    posts_count = sizes(posts_keys)
    edges = sizes([keys.following(u) for u in sample])
    home_entries = sizes(home_keys)
    pipe = r.pipeline(transaction=False)
    for key in home_keys:
        pipe.object("encoding", key)
    encodings: dict[str, int] = {}
    for encoding in pipe.execute():
        encodings[str(encoding)] = encodings.get(str(encoding), 0) + 1
    infos = _info("memory")
    return {
        "used_memory": sum(info["used_memory"] for info in infos),
        "allocator": infos[0].get("mem_allocator"),
        "per_user": user_bytes / len(sample),
        "per_status": (status_bytes / len(sids) if sids else 0)
        + usage(posts_keys) / max(posts_count, 1),
        "per_follow_edge": usage(edge_keys) / max(edges, 1),
        "per_timeline_entry": usage(home_keys) / max(home_entries, 1),
        "home_encodings": encodings,
        "home_entries_sampled": home_entries,
    }


def fanout(sizes: list[int]) -> list[dict]:
    """One post to `size` synthetic active followers, for each size (median of 3):
    how long the post took to answer, and until its fan-out job (run by the
    bench's worker process) had written every home. bench/fanout.py measures
    more (time to home percentiles, posting under load, pulled authors)."""
    from accounts.services import seen_stamp_queue, user_create
    from config.pipelines import pipeline_run
    from config.redis import get_redis
    from timeline import keys, services
    from timeline.services import status_create

    r = get_redis()
    results = []
    base_uid = 10_000_000  # synthetic followers, far above the seeded ids
    for size in sizes:
        author = user_create(
            username=f"fan_{size}_{os.getpid() % 1000}", password="x" * 12
        )
        followers = list(range(base_uid, base_uid + size))
        base_uid += size
        for start in range(0, size, 1000):
            chunk = followers[start : start + 1000]

            def link(pipe, chunk=chunk, author=author) -> None:
                pipe.zadd(keys.followers(author.id), {f: 1 for f in chunk})
                for f in chunk:
                    pipe.zadd(keys.following(f), {author.id: 1})
                    seen_stamp_queue(pipe, uid=f)

            pipeline_run(link, confirm=False)
        posts, totals = [], []
        queue = keys.job_queue(keys.slot_of_user(author.id))
        for i in range(3):
            started = time.perf_counter()
            status = status_create(author=author, text=f"fan-out {size} #{i}")
            posts.append(time.perf_counter() - started)
            job = services.fanout_job_id(author.id, status.id)
            while r.zscore(queue, job) is not None:
                time.sleep(0.002)
            totals.append(time.perf_counter() - started)
        total = statistics.median(totals)
        results.append(
            {
                "followers": size,
                "post_seconds": statistics.median(posts),
                "seconds": total,
                "inserts_per_s": (size + 1) / total,
            }
        )
        # The synthetic followers' keys go again (they are not users).
        for start in range(0, size, 5000):
            chunk = followers[start : start + 5000]
            r.delete(*[keys.home(f) for f in chunk])
            r.delete(*[keys.following(f) for f in chunk])
    return results


def zadd_ceiling(
    size: int, *, redis_socket: Path | None, cluster_port: int | None = None
) -> dict:
    """How fast the same server takes plain ZADDs: from redis-py, and redis-benchmark."""
    from config.redis import get_redis

    r = get_redis()
    pipe = r.pipeline(transaction=False)
    started = time.perf_counter()
    for i in range(size):
        pipe.zadd(f"bench:zadd:{i}", {1: 1})
        if len(pipe) >= 1000:
            pipe.execute()
    pipe.execute()
    python_rate = size / (time.perf_counter() - started)
    for start in range(0, size, 5000):
        r.delete(*[f"bench:zadd:{i}" for i in range(start, min(size, start + 5000))])
    ceiling: dict = {"python_pipelined_zadd_per_s": python_rate}
    if shutil.which("redis-benchmark"):
        out = subprocess.run(
            ["redis-benchmark",
             *(["-s", str(redis_socket)] if redis_socket else
               ["--cluster", "-h", "127.0.0.1", "-p", str(cluster_port)]),
             "-n", str(max(size, 100_000)),
             "-P", "64", "-r", "100000", "--csv", "zadd", "bench:rb:{tag}:__rand_int__", "1",
             "__rand_int__"],
            check=True, capture_output=True, text=True,
        ).stdout  # fmt: skip
        rows = list(csv.DictReader(out.splitlines()))
        rate = rows[-1].get("rps") if rows else None
        ceiling["redis_benchmark_zadd_p64_per_s"] = float(rate) if rate else None
        found = list(r.scan_iter(match="bench:rb:*", count=10_000))
        for start in range(0, len(found), 5000):
            r.delete(*found[start : start + 5000])
    return ceiling
