"""A mention's link in a status's `content` and its Mention entity name one address,
whatever case the text wrote the name in: Tusky (and Flare, Mastify...) find the
Mention of a tapped link by `mention.url == href`; without a match the tap opens
a browser instead of the profile."""

from __future__ import annotations

import re

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user


@pytest.fixture(autouse=True)
def _no_rate_limits(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


def _hrefs(html: str) -> list[str]:
    return re.findall(r'href="([^"]+)"', html)


def test_a_mentions_url_is_the_href_of_its_link_in_content():
    make_user("alice")
    bob = make_user("bob")
    client = api_client(token_for(bob))
    status = client.post("/api/v1/statuses", {"status": "hi @ALICE"}).json()
    (mention,) = status["mentions"]
    assert mention["url"] in _hrefs(status["content"])
    assert ">@ALICE</a>" in status["content"]  # the name as written
    # The address opens her profile (any case finds it, with no redirect).
    path = mention["url"].removeprefix("http://testserver")
    assert api_client().get(path).status_code == 200
