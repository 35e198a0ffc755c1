"""What the project's settings mean to Django itself (`config.apps`)."""

from __future__ import annotations

import warnings

import pytest
from django.apps import apps
from django.core import signals
from django.db import close_old_connections, reset_queries
from django.test import override_settings

from config.apps import has_database
from tests.helpers import deployed_process

pytestmark = pytest.mark.fake_redis  # no Redis involved: once is enough

# A deployed process (the WSGI application granian and gunicorn load) answers a
# request, and says which handlers its request signals ran. The test client
# disconnects `close_old_connections` while it sends the request signals and
# connects it again after, so only a process of its own shows what a server runs.
PROBE = """
import io

from django.core import signals

from config.wsgi import application

ran = []


def recorded(receiver, name):
    def run(**kwargs):
        ran.append(name)
        return receiver(**kwargs)

    return run


for signal in (signals.request_started, signals.request_finished):
    for receiver in [ref() for _, ref, *_ in signal.receivers]:
        signal.disconnect(receiver)
        name = f"{receiver.__module__}.{receiver.__qualname__}"
        signal.connect(recorded(receiver, name), weak=False)
environ = {
    "REQUEST_METHOD": "GET",
    "PATH_INFO": "/healthz/",
    "SERVER_NAME": "testserver",
    "SERVER_PORT": "443",
    "wsgi.url_scheme": "https",
    "wsgi.input": io.BytesIO(),
}
statuses = []
body = application(environ, lambda status, headers: statuses.append(status))
b"".join(body)
body.close()
print(statuses[0])
print("\\n".join(sorted(set(ran))))
"""


def _served() -> list[str]:
    return deployed_process(PROBE).split("\n")


def test_a_served_request_runs_no_database_bookkeeping_without_a_database():
    status, *ran = _served()
    assert status == "200 OK"
    # Django's own request handlers still run (the probe saw them), but none of
    # those kept for database connections: the project has none.
    assert "django.core.handlers.base.reset_urlconf" in ran
    assert not [name for name in ran if name.startswith("django.db.")]


@pytest.mark.parametrize(
    ("databases", "real"),
    [
        ({}, False),
        # What Django makes of an empty DATABASES once anything reads it.
        ({"default": {"ENGINE": "django.db.backends.dummy"}}, False),
        ({"default": {}}, False),
        ({"default": {"ENGINE": "django.db.backends.sqlite3"}}, True),
        (
            {
                "default": {"ENGINE": "django.db.backends.dummy"},
                "other": {"ENGINE": "django.db.backends.postgresql"},
            },
            True,
        ),
    ],
)
def test_only_a_configured_engine_counts_as_a_database(databases, real):
    assert has_database(databases) is real


@pytest.fixture
def request_signals():
    """The request signals' receivers as they were, put back after the test."""
    saved = {
        signal: list(signal.receivers)
        for signal in (signals.request_started, signals.request_finished)
    }
    yield
    for signal, receivers in saved.items():
        signal.receivers[:] = receivers
        signal.sender_receivers_cache.clear()


def test_a_project_with_a_database_keeps_django_s_connection_handling(
    request_signals,
):
    signals.request_started.connect(reset_queries)
    signals.request_started.connect(close_old_connections)
    signals.request_finished.connect(close_old_connections)
    real = {"default": {"ENGINE": "django.db.backends.sqlite3"}}
    with warnings.catch_warnings():
        # Django warns that overriding DATABASES in a test can surprise: it is
        # read only by `ready()` here.
        warnings.simplefilter("ignore", UserWarning)
        with override_settings(DATABASES=real):
            apps.get_app_config("config").ready()
    receivers = {
        signal: [ref() for _, ref, *_ in signal.receivers]
        for signal in (signals.request_started, signals.request_finished)
    }
    assert close_old_connections in receivers[signals.request_started]
    assert close_old_connections in receivers[signals.request_finished]
    assert reset_queries in receivers[signals.request_started]
