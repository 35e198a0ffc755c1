"""A round trip's replies as the pipelines read them (`config.pipelines._exchange`):
converted as redis-py converts them, on either protocol, with hiredis or redis-py's
own parser; an error reply in place of its command; nothing of a broken read left
for the next round trip."""

from __future__ import annotations

import pytest
import redis
from redis._parsers import _RESP2Parser

from config.pipelines import LuaScript, ReadBatch, _exchange, hashes_queue, pipeline_run
from config.redis import set_redis

TEXT = "héllo ✓ <b>&</b>"


def _twin(client, **options):
    """A client to the same Redis as `client`, with other connection options."""
    if isinstance(client, redis.RedisCluster):
        node = client.get_default_node()
        return redis.RedisCluster(
            host=node.host, port=node.port, decode_responses=True, **options
        )
    pool = client.connection_pool
    kwargs = {**pool.connection_kwargs, **options}
    if kwargs.get("protocol") == 2:  # RESP3 only
        kwargs.pop("maint_notifications_config", None)
    twin_pool = type(pool)(connection_class=pool.connection_class, **kwargs)
    return type(client)(connection_pool=twin_pool)


@pytest.fixture(
    params=[
        pytest.param({"protocol": 3}, id="resp3"),
        pytest.param({"protocol": 2}, id="resp2"),
        pytest.param({"protocol": 3, "parser_class": _RESP2Parser}, id="resp3-python"),
        pytest.param({"protocol": 2, "parser_class": _RESP2Parser}, id="resp2-python"),
    ]
)
def client(request, r):
    """The site's client on each protocol, with hiredis and with redis-py's parser."""
    twin = _twin(r, **request.param)
    set_redis(twin)
    yield twin
    set_redis(r)
    twin.close()


def _server(client, key: str):
    """The server (on a Cluster, the node's client) that holds `key`."""
    if isinstance(client, redis.RedisCluster):
        return client.get_redis_connection(client.get_node_from_key(key))
    return client


def test_replies_are_what_redis_py_gives_for_the_same_commands(client):
    client.set("{t}text", TEXT)
    client.hset("{t}hash", mapping={"a": TEXT, "n": "7"})
    client.zadd("{t}z", {"one": 1, "half": 0.5, TEXT: 2.25})
    client.sadd("{t}set", "x", "y")
    reads = [
        ("get", ("{t}text",), {}),
        ("get", ("{t}missing",), {}),
        ("hget", ("{t}hash", "a"), {}),
        ("hmget", ("{t}hash", ["a", "n", "none"]), {}),
        ("hgetall", ("{t}hash",), {}),
        ("zrange", ("{t}z", 0, -1), {}),
        ("zrange", ("{t}z", 0, -1), {"withscores": True}),
        ("zrevrange", ("{t}z", 0, 1), {"withscores": True, "score_cast_func": int}),
        ("zrangebyscore", ("{t}z", 0.5, "+inf"), {"withscores": True}),
        ("zscore", ("{t}z", "half"), {}),
        ("zscore", ("{t}z", "none"), {}),
        ("zmscore", ("{t}z", ["one", "none"]), {}),
        ("smembers", ("{t}set",), {}),
        ("exists", ("{t}text", "{t}missing"), {}),
        ("dump", ("{t}text",), {}),  # never decoded: the value's bytes
    ]
    expected = [getattr(client, name)(*args, **kw) for name, args, kw in reads]

    def build(pipe) -> None:
        for name, args, kw in reads:
            getattr(pipe, name)(*args, **kw)
        pipe.mget([])  # redis-py's empty answer, not the server's error

    replies = pipeline_run(build, confirm=False)

    assert replies == [*expected, []]
    assert replies[0] == TEXT and replies[9] == 0.5 and replies[10] is None
    assert [tuple(pair) for pair in replies[6]] == [
        ("half", 0.5),
        ("one", 1.0),
        (TEXT, 2.25),
    ]
    assert [tuple(pair) for pair in replies[7]] == [(TEXT, 2), ("one", 1)]
    assert isinstance(replies[14], bytes)


def test_an_error_reply_comes_back_in_place_of_its_command(client):
    server = _server(client, "{t}a")
    stack = [
        (("SET", "{t}a", "1"), {}),
        (("ZADD", "{t}a", 1, "x"), {}),  # WRONGTYPE
        (("EVALSHA", "0" * 40, 0), {}),  # a script the server does not have
        (("GET", "{t}a"), {}),
    ]

    replies = _exchange(server, stack)()

    assert replies[0] is True and replies[3] == "1"
    assert isinstance(replies[1], redis.exceptions.ResponseError)
    assert "WRONGTYPE" in str(replies[1])
    assert isinstance(replies[2], redis.exceptions.NoScriptError)
    # Every reply was read: the next round trip on the connection gets its own.
    assert _exchange(server, [(("GET", "{t}a"), {})])() == ["1"]


_COUNT = LuaScript("return redis.call('INCR', KEYS[1])")


def test_a_batch_whose_scripts_the_server_lost_reads_every_value(client):
    client.hset("{t}user", mapping={"name": TEXT})
    client.set("{t}plain", "p")
    _COUNT(keys=["{t}count"], args=[])
    client.script_flush()  # on a Cluster, every primary's
    assert client.script_exists(_COUNT.sha) == [False]

    batch = ReadBatch()
    before = batch.queue(lambda pipe: pipe.get("{t}plain"), lambda rs: rs[0])
    count = batch.queue(
        lambda pipe: _COUNT.queue(pipe, keys=["{t}count"], args=[]), lambda rs: rs[0]
    )
    users = hashes_queue(
        batch,
        [1, 2],
        lambda i: "{t}user" if i == 1 else "{t}no",
        ("name",),
        lambda i, values: values[0],
    )
    after = batch.queue(lambda pipe: pipe.get("{t}plain"), lambda rs: rs[0])

    assert (before.value, count.value, after.value) == ("p", 2, "p")
    assert users.value == {1: TEXT}


@pytest.mark.real_redis
def test_a_connection_the_server_closes_mid_read_raises_and_is_not_reused(r):
    server = _server(r, "{t}before")
    closing = [
        (("SET", "{t}before", "1"), {}),
        (("QUIT",), {}),  # the server answers, then closes the socket
        (("GET", "{t}before"), {}),
    ]

    with pytest.raises(redis.exceptions.ConnectionError):
        _exchange(server, closing)()
    assert r.get("{t}before") == "1"
    assert pipeline_run(lambda pipe: pipe.get("{t}before")) == ["1"]


@pytest.mark.real_redis
def test_a_read_that_timed_out_leaves_no_late_reply_for_the_next_round_trip(r):
    client = _twin(r, socket_timeout=0.3)
    set_redis(client)
    client.set("{t}a", "a")
    client.set("{t}b", "b")

    def blocked(pipe) -> None:
        pipe.get("{t}a")
        pipe.blpop(["{t}empty"], timeout=1)  # answers in a second: after the timeout
        pipe.get("{t}a")

    try:
        with pytest.raises(redis.exceptions.TimeoutError):
            pipeline_run(blocked, confirm=False)
        # Sent at once, on a fresh connection: not behind the BLPOP, whose late
        # replies would otherwise be read as this one's.
        assert pipeline_run(lambda pipe: pipe.get("{t}b"), confirm=False) == ["b"]
    finally:
        set_redis(r)
        client.close()


@pytest.mark.single_server
def test_a_push_message_between_replies_is_not_taken_for_one(r):
    # RESP3: a key this connection read and then wrote sends it an invalidation
    # message among the replies of the same round trip.
    client = _twin(r, protocol=3)
    set_redis(client)
    client.set("{t}k", "v1")

    def tracked(pipe) -> None:
        pipe.execute_command("CLIENT", "TRACKING", "ON")
        pipe.get("{t}k")
        pipe.set("{t}k", "v2")
        pipe.get("{t}k")
        pipe.execute_command("CLIENT", "TRACKING", "OFF")

    try:
        replies = pipeline_run(tracked, confirm=False)
        assert replies[1:4] == ["v1", True, "v2"] and len(replies) == 5
        assert pipeline_run(lambda pipe: pipe.get("{t}k")) == ["v2"]
    finally:
        set_redis(r)
        client.close()
