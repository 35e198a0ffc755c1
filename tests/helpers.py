"""Small helpers the tests share: make a user, log a test client in, run a
deployed process."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.conf import settings
from django.test import Client

from accounts import keys as account_keys
from accounts import services
from config import cluster, pipelines
from config.redis import get_redis_bytes

PASSWORD = "correct-horse-battery"


def make_user(username: str, password: str = PASSWORD):
    return services.user_create(username=username, password=password)


def logged_in_client(
    username: str, password: str = PASSWORD, **client_kwargs
) -> Client:
    """A test client that logged in through the real login page."""
    response = Client().post("/login/", {"username": username, "password": password})
    assert response.status_code == 302, response.content
    client = Client(**client_kwargs)
    client.cookies[settings.AUTH_COOKIE_NAME] = response.cookies[
        settings.AUTH_COOKIE_NAME
    ].value
    return client


def run_jobs(**options) -> int:
    """Run the due fan-out jobs to the end, as a worker would; returns how many."""
    from timeline import fanout

    return fanout.run_pending(**options)


def property_test(max_examples: int = 60):
    """Hypothesis settings for the property tests: modest example counts so the suite
    stays fast, no deadline (a shared machine's timing is noise), and one fixture set
    per test function shared by its examples (they add to the same fresh Redis)."""
    from hypothesis import HealthCheck, settings

    return settings(
        max_examples=max_examples,
        deadline=None,
        suppress_health_check=[HealthCheck.function_scoped_fixture],
    )


def store_snapshot(r) -> dict:
    """Every key's value, but the abuse limits' budgets (`limit:*`): they expire by
    themselves (a follow's within 2 s), whatever the code under test does."""

    def string(key: str) -> str | bytes:
        # One server's fan-out indexes (`seen:days`, `muters`) hold bytes, not text.
        value = get_redis_bytes().get(key)
        try:
            return value.decode()
        except UnicodeDecodeError:
            return value

    read = {
        "string": string,
        "hash": r.hgetall,
        "zset": lambda key: r.zrange(key, 0, -1, withscores=True),
        "set": lambda key: sorted(r.smembers(key)),
    }
    found = sorted(k for k in r.scan_iter() if not k.startswith("limit:"))
    return {key: read[r.type(key)](key) for key in found}


def status_ids(html: str) -> list[int]:
    """The ids of the statuses a page shows, in its order."""
    return [int(x) for x in re.findall(r'data-status-id="(\d+)"', html)]


def body(response) -> str:
    return response.content.decode()


def page(client, url: str) -> str:
    """A page's HTML, which must have answered 200."""
    response = client.get(url)
    assert response.status_code == 200
    return body(response)


def notifications_shown(client) -> list[str]:
    """The notifications the page shows, newest first, as plain text."""
    html = page(client, "/notifications/")
    items = re.findall(r'<li class="notification[^"]*"[^>]*>(.*?)</li>', html, re.S)
    texts = (re.sub(r"<[^>]+>", "", re.sub(r"<time.*?</time>", " ", t)) for t in items)
    return [
        " ".join(text.split()).removeprefix("New: ").removesuffix(".") for text in texts
    ]


def make_away(r, uid: int) -> None:
    """Leave the store as it is for a reader last seen FANOUT_ACTIVE_DAYS days ago,
    the newest day whose stamp may have expired by now: it has, and one server's
    `seen:days` still holds that day (the fan-out must not trust it)."""
    r.delete(account_keys.seen(uid))
    day = services.seen_day() - settings.FANOUT_ACTIVE_DAYS
    days = services.seen_days_args(uid=uid, day=day)
    if days is not None:
        r.setrange(account_keys.seen_days(), *days)


ROOT = Path(__file__).resolve().parent.parent


def deployed_process(code: str, **environ: str) -> str:
    """What `code` prints in a fresh interpreter with production settings and only
    `environ` added to this one's environment (no setting of the test run's)."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("SECURE_", "DJANGO_", "DEBUG"))
    }
    env.update(
        DJANGO_SETTINGS_MODULE="config.settings",
        DEBUG="false",
        SECRET_KEY="x" * 50,
        ALLOWED_HOSTS="testserver",
        **environ,
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout


@contextlib.contextmanager
def cut_short(predicate, *, after: bool = True):
    """Fail the first round trip whose commands (a list of argument tuples) match
    `predicate` with a ConnectionError, as a Redis that stops answering: before
    they were sent, or `after` the server ran them (the reply lost: a 503 whose
    write went through). Both one server's and a Cluster's pipelines write through
    `_exchange`. Yields the list of the commands it failed (empty: it never
    fired)."""
    fired: list[list[tuple]] = []

    def wrap(original):
        def exchange(node, stack):
            commands = [args for args, _ in stack]
            if fired or not predicate(commands):
                return original(node, stack)
            fired.append(commands)
            if not after:
                raise redis.ConnectionError("Redis stopped answering (before)")
            read = original(node, stack)

            def lost():
                read()
                raise redis.ConnectionError("Redis stopped answering (reply lost)")

            return lost

        return exchange

    with pytest.MonkeyPatch.context() as m:
        m.setattr(pipelines, "_exchange", wrap(pipelines._exchange))
        m.setattr(cluster, "_exchange", wrap(cluster._exchange))
        yield fired
