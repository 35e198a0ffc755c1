"""Settings computed from others, checked as a deployed process reads them: a fresh
interpreter with only the environment given, answering a real request."""

from __future__ import annotations

import pytest

from tests.helpers import deployed_process

pytestmark = pytest.mark.fake_redis  # no Redis involved: once is enough

# A process with production settings answers /healthz/ (no Redis) over HTTPS.
HSTS_PROBE = """
import django
django.setup()
from django.test import Client
print(Client().get("/healthz/", secure=True).get("Strict-Transport-Security", ""))
"""


def hsts_header(**environ: str) -> str:
    return deployed_process(HSTS_PROBE, **environ).strip()


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
