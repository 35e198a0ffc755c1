"""Status length through the client API: apps count each link as the instance's
`characters_reserved_per_url` and each character as a reader sees one (a grapheme
cluster: a family emoji is one), and offer to post what fits `max_characters`; the
site takes what they offer (it answered 422 to statuses they counted as fitting)."""

from __future__ import annotations

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user


@pytest.fixture(autouse=True)
def _no_rate_limits(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


def _limits() -> tuple[int, int]:
    config = api_client().get("/api/v1/instance").json()["configuration"]["statuses"]
    return config["characters_reserved_per_url"], config["max_characters"]


def test_a_url_counts_as_characters_reserved_per_url():
    alice = make_user("alice")
    reserved, limit = _limits()
    url = "https://example.com/" + "a" * 100
    text = "x" * (limit - reserved - 1) + " " + url
    assert len(text) - len(url) + reserved == limit  # what every client counts
    client = api_client(token_for(alice))
    response = client.post("/api/v1/statuses", {"status": text})
    assert response.status_code == 200, response.content
    assert response.json()["content"].count("<a ") == 1
    refused = client.post("/api/v1/statuses", {"status": "x" + text})
    assert refused.status_code == 422
    assert refused.json()["error"] == (
        f"Validation failed: Text character limit of {limit} exceeded"
    )


def test_a_status_of_one_huge_url_is_refused():
    """It counts as one link, but is not stored: the text written out is bounded."""
    alice = make_user("alice")
    url = "https://example.com/" + "a" * 10_000
    response = api_client(token_for(alice)).post("/api/v1/statuses", {"status": url})
    assert response.status_code == 422
    assert response.json()["error"].startswith("Validation failed: Text character")


def test_short_links_over_the_limit_are_refused_as_too_long():
    """Links shorter than what they count make a text count more than it holds: its
    refusal says the limit, not that the text is blank."""
    alice = make_user("alice")
    reserved, limit = _limits()
    link = "http://a.io"
    assert len(link) < reserved
    text = "x" * (limit - 2 * len(link) - 2) + f" {link} {link}"
    assert len(text) == limit  # it fits written out, not as counted
    response = api_client(token_for(alice)).post("/api/v1/statuses", {"status": text})
    assert response.status_code == 422
    assert response.json()["error"] == (
        f"Validation failed: Text character limit of {limit} exceeded"
    )


FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"


def test_a_status_counts_characters_as_the_apps_do():
    """Apps count a family emoji (seven code points) as one character, and offer to
    post `max_characters` of them: taken and shown whole; one more is refused in
    Mastodon's words."""
    alice = make_user("alice")
    _, limit = _limits()
    client = api_client(token_for(alice))
    response = client.post("/api/v1/statuses", {"status": FAMILY * limit})
    assert response.status_code == 200, response.content
    sid = response.json()["id"]
    assert FAMILY * limit in response.json()["content"]
    assert FAMILY * limit in client.get(f"/api/v1/statuses/{sid}").json()["content"]
    refused = client.post("/api/v1/statuses", {"status": FAMILY * (limit + 1)})
    assert refused.status_code == 422
    assert refused.json()["error"] == (
        f"Validation failed: Text character limit of {limit} exceeded"
    )
    assert client.get(f"/api/v1/accounts/{alice.id}").json()["statuses_count"] == 1
