"""The compose box's counter counts as the server's rule does
(`timeline.domain.text_length`): a link as 23 characters however long, a name or a
tag that hides a link, an accent typed apart; what it shows as fitting, Post takes."""

from __future__ import annotations

import pytest
from django.conf import settings

from tests.browser.test_journeys import log_in, post, statuses
from tests.helpers import make_user
from timeline.domain import RAW_LENGTH_FACTOR, normalize_text, text_length
from timeline.richtext import URL_SHOWN

pytestmark = [pytest.mark.real_redis, pytest.mark.browser]

LONG_URL = "https://example.com/" + "a" * 100
TEXTS = [
    "😀" * 10,
    f"see {LONG_URL}.",
    "short http://a.co and www.example.org/x)!",
    "not links: #https://example.com @https://example.com https:// www.",
    "a@www.example.org x#www.example.org",
    "cafe\u0301 #हिन्दी#https://example.com",
    f"  \t{LONG_URL}\n\n{LONG_URL}\u3000 ",
    "(https://example.com/a_(b))",
]


@pytest.fixture
def compose(new_page):
    make_user("alice")
    page = new_page()
    log_in(page, "alice")
    return page


def counter(page, text: str) -> str:
    page.get_by_label("What's happening?").fill(text)
    return page.locator("#compose-counter").inner_text()


def test_the_counter_counts_as_the_server(compose):
    # One page for every text: each is typed over the last.
    for text in TEXTS:
        left = settings.STATUS_MAX_LENGTH - text_length(normalize_text(text))
        assert counter(compose, text) == f"{left} characters left", text


def test_a_text_the_counter_shows_as_full_is_posted(compose):
    text = "x" * (settings.STATUS_MAX_LENGTH - 24) + " " + LONG_URL
    assert counter(compose, text) == "0 characters left"
    post(compose, text)
    shown = text.removesuffix(LONG_URL) + LONG_URL[:URL_SHOWN] + "…"
    assert statuses(compose) == [shown]


def test_the_counter_shows_the_bound_on_a_text_written_out(compose):
    raw_limit = RAW_LENGTH_FACTOR * settings.STATUS_MAX_LENGTH
    text = "https://example.com/" + "a" * raw_limit
    assert counter(compose, text) == "20 characters too many with the links written out"
    assert compose.locator("#compose-counter.over").count() == 1
