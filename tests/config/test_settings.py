"""Settings computed from others, checked as a deployed process reads them: a fresh
interpreter with only the environment given, answering a real request."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.fake_redis  # no Redis involved: once is enough

# A process with production settings answers /healthz/ (no Redis) over HTTPS.
HSTS_PROBE = """
import django
django.setup()
from django.test import Client
print(Client().get("/healthz/", secure=True).get("Strict-Transport-Security", ""))
"""


def hsts_header(**environ: str) -> str:
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
        [sys.executable, "-c", HSTS_PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return done.stdout.strip()


@pytest.mark.parametrize(
    ("environ", "expected"),
    [
        # The default hour is a trial: preloading it would pin browsers for good.
        ({}, "max-age=3600; includeSubDomains"),
        (
            {"SECURE_HSTS_SECONDS": "31536000"},
            "max-age=31536000; includeSubDomains; preload",
        ),
        (
            {"SECURE_HSTS_SECONDS": "31535999"},
            "max-age=31535999; includeSubDomains",
        ),
        (
            {"SECURE_HSTS_SECONDS": "63072000", "SECURE_HSTS_PRELOAD": "false"},
            "max-age=63072000; includeSubDomains",
        ),
    ],
)
def test_hsts_preload_only_with_a_year_or_more(environ, expected):
    assert hsts_header(**environ) == expected
