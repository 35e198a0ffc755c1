"""The one way to Redis in bulk: pipelines and read batches, on both backends."""

from __future__ import annotations

import pytest
import redis

from config.pipelines import ReadBatch, pipeline_run
from config.redis import get_redis, set_redis


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
