"""The one way to Redis in bulk: pipelines and read batches, on both backends."""

from __future__ import annotations

import pytest
import redis

from config.pipelines import LuaScript, ReadBatch, pipeline_run
from config.redis import get_redis, is_cluster, set_redis


def test_an_error_reply_fails_the_pipeline_and_leaves_the_connection_usable(r):
    r.set("plain", "a string")

    def mixed(pipe) -> None:
        pipe.set("first", "1")
        pipe.zadd("plain", {"x": 1})  # WRONGTYPE
        pipe.get("first")

    with pytest.raises(redis.exceptions.ResponseError, match="WRONGTYPE"):
        pipeline_run(mixed)
    # Every reply was read: the next round trip gets its own replies, not leftovers.
    assert pipeline_run(lambda pipe: (pipe.get("first"), pipe.get("plain"))) == [
        "1",
        "a string",
    ]


def test_replies_are_converted_as_redis_py_converts_them(r):
    r.zadd("z", {"a": 1, "b": 2})

    def reads(pipe) -> None:
        pipe.zscore("z", "b")
        pipe.zrevrangebyscore("z", "+inf", "-inf", withscores=True)
        pipe.mget([])  # redis-py answers an empty MGET itself

    assert pipeline_run(reads) == [2.0, [("b", 2.0), ("a", 1.0)], []]


def test_every_read_of_a_failed_batch_raises_the_redis_error(redis_client):
    batch = ReadBatch()
    first = batch.queue(lambda pipe: pipe.get("k"), lambda replies: replies[0])
    second = batch.queue(lambda pipe: pipe.get("k"), lambda replies: replies[0])
    set_redis(
        redis.Redis.from_url(
            "unix:///nonexistent/redis.sock", socket_connect_timeout=0.2
        )
    )
    for deferred in (first, second, first):
        with pytest.raises(redis.exceptions.ConnectionError):
            _ = deferred.value
    assert not first.done
    set_redis(redis_client)
    assert get_redis().ping()


_DOUBLE = LuaScript("return redis.call('INCRBY', KEYS[1], 2)")


@pytest.mark.real_redis
def test_a_server_that_lost_the_scripts_runs_nothing_twice(r):
    # After a restart (or a failover to a replica without the scripts) the script
    # call answers NOSCRIPT and runs again; the plain commands beside it ran once.
    pipeline_run(lambda pipe: _DOUBLE.queue(pipe, keys=["{s}:warm"], args=[]))
    if is_cluster():
        # Only the node of the script's key forgets: the counters live elsewhere too.
        r.get_redis_connection(r.get_node_from_key("{s}:by-script")).script_flush()
    else:
        r.script_flush()

    def mixed(pipe) -> None:
        for n in range(6):
            pipe.incr(f"{{c{n}}}:plain")
        _DOUBLE.queue(pipe, keys=["{s}:by-script"], args=[])
        pipe.incr("{s}:after")

    replies = pipeline_run(mixed)
    assert replies == [1, 1, 1, 1, 1, 1, 2, 1]
    assert [r.get(f"{{c{n}}}:plain") for n in range(6)] == ["1"] * 6
    assert r.get("{s}:by-script") == "2" and r.get("{s}:after") == "1"
