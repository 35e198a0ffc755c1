"""The status length rule as an author meets it, on the site and through the service
(`timeline.domain.text_problem`, the one rule both apply): a link counts as 23
characters however long, as the client API tells apps (`characters_reserved_per_url`)
and as they count before they offer to post; written out, a text may be at most
RAW_LENGTH_FACTOR times the limit."""

from __future__ import annotations

import html

import pytest
from django.conf import settings

from tests.helpers import body, logged_in_client, make_user, page, run_jobs
from timeline import keys, services
from timeline.domain import RAW_LENGTH_FACTOR, URL_LENGTH, InvalidStatus

LONG_URL = "https://example.com/" + "a" * 100


@pytest.fixture
def alice():
    return make_user("alice")


def exactly_full(url: str) -> str:
    """A text of exactly the limit as clients count it: text, a blank, the link."""
    return "x" * (settings.STATUS_MAX_LENGTH - URL_LENGTH - 1) + " " + url


def test_a_long_link_counts_as_23_characters(r, alice):
    text = exactly_full(LONG_URL)
    assert len(text) > settings.STATUS_MAX_LENGTH
    status = services.status_create(author=alice, text=text)
    assert r.hget(keys.status(status.id), "text") == text
    limit = settings.STATUS_MAX_LENGTH
    with pytest.raises(InvalidStatus) as refused:
        services.status_create(author=alice, text="x" + text)
    assert str(refused.value) == (
        f"A status is at most {limit} characters, a link counting as 23 "
        f"(this one has {limit + 1})."
    )


def test_a_short_link_counts_as_23_characters_too(r, alice):
    """As Mastodon's apps count it: what they refuse, the site refuses."""
    text = exactly_full("http://a.co")
    services.status_create(author=alice, text=text)
    with pytest.raises(InvalidStatus):
        services.status_create(author=alice, text="x" + text)


def test_a_text_written_out_is_bounded_too(r, alice):
    """One link of 10,000 characters counts 23, but is refused: a status is at most
    RAW_LENGTH_FACTOR times the limit with its links in full."""
    limit = settings.STATUS_MAX_LENGTH
    raw_limit = RAW_LENGTH_FACTOR * limit
    prefix = "https://example.com/"
    longest = prefix + "a" * (raw_limit - len(prefix))
    services.status_create(author=alice, text=longest)
    for text in (longest + "a", prefix + "a" * 10_000):
        with pytest.raises(InvalidStatus) as refused:
            services.status_create(author=alice, text=text)
        assert str(refused.value) == (
            f"A status is at most {limit} characters, and {raw_limit} with its "
            f"links written out in full (this one has {len(text)})."
        )
    assert r.zcard(keys.posts(alice.id)) == 1


def test_the_site_posts_what_the_rule_takes_and_explains_a_refusal(r, alice):
    client = logged_in_client("alice")
    text = exactly_full(LONG_URL)
    assert client.post("/post/", {"text": text}).status_code == 302
    run_jobs()
    assert f'title="{LONG_URL}"' in page(client, "/")
    refused = client.post("/post/", {"text": "x" + text})
    assert refused.status_code == 400
    assert "a link counting as 23 (this one has 281)" in body(refused)
    assert html.escape("x" + text) in body(refused)  # what was typed is not lost
    assert r.zcard(keys.posts(alice.id)) == 1
