"""The compose box's counter counts as the server's rule does
(`timeline.domain.text_length`): a character as a reader sees one (an emoji of
several code points, a flag, a letter with accents typed apart or with none to
compose into), a link as 23 characters however long, a name or a tag that hides a
link; what it shows as fitting, Post takes."""

from __future__ import annotations

import pytest
from django.conf import settings
from playwright.sync_api import expect

from tests.browser.test_journeys import log_in, post, statuses
from tests.helpers import make_user
from timeline.domain import (
    RAW_LENGTH_FACTOR,
    normalize_spoiler,
    normalize_text,
    text_length,
)
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
    # One character each as read, of several code points (and UTF-16 units).
    "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466" * 10,
    "\U0001f1eb\U0001f1f7\U0001f1e9\U0001f1ea flags",
    "\U0001f469\U0001f3fc\u200d\u2764\ufe0f\u200d\U0001f48b\u200d\U0001f468\U0001f3ff",
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f"
    " 1\ufe0f\u20e3",
    "q\u0307\u0323 e\u0301\u0323 \u1100\u1161\u11a8 \u0915\u094d\u0937\u093f",
    # Another server's handles count as their @names; not after a word or in a link.
    "hi @bob@mastodon.social, @first.last@example.com. @ab@x.io@cd@y.io",
    "x@bob@example.com @bob@- see https://example.com/@bob@example.com @bob@",
    "#tag@bob@example.com é@bob@example.com",
    # Mastodon's word characters: a domain's marks and connectors are part of it, a
    # mark before a handle ends none, a number that is no digit does.
    "@ravi@\u0938\u0930\u0915\u093e\u0930.\u092d\u093e\u0930\u0924 @bob@a\u203fb.c"
    " \u0915\u093f@bob@example.com \u2460@bob@example.com x\u00b2@bob@b.c",
    # Marks and joiners at a link's edges: the link counts 23, whatever joins it.
    "\U0001f44d\U0001f3fd\u200d see https://example.com/\U0001f600\u0301"
    " \u0600https://a.co",
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


def test_280_family_emoji_are_full_and_posted_whole(compose):
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
    text = family * settings.STATUS_MAX_LENGTH
    assert counter(compose, family + text) == "1 character too many"
    assert compose.locator("#compose-counter.over").count() == 1
    assert counter(compose, text) == "0 characters left"
    post(compose, text)
    assert statuses(compose) == [text]


def test_the_counter_shows_the_bound_on_a_text_written_out(compose):
    raw_limit = RAW_LENGTH_FACTOR * settings.STATUS_MAX_LENGTH
    text = "https://example.com/" + "a" * raw_limit
    assert counter(compose, text) == "20 characters too many with the links written out"
    assert compose.locator("#compose-counter.over").count() == 1


def test_the_bound_on_a_text_without_links_says_what_it_counts(compose):
    """A letter under many accents reads as one character but is stored as many:
    past the bound, the counter names what it counts, not links there are none of."""
    raw_limit = RAW_LENGTH_FACTOR * settings.STATUS_MAX_LENGTH
    text = "a" + "\u0301" * (raw_limit + 1)  # NFC joins the first: raw_limit + 1
    assert counter(compose, text) == (
        "1 character too many counting each part of an emoji or accent"
    )
    assert compose.locator("#compose-counter.over").count() == 1


def test_without_intl_segmenter_the_counter_counts_code_points(new_page):
    """A browser without Intl.Segmenter counts no fewer than the server: what its
    counter shows as fitting, Post takes (an emoji of several code points counts
    several there)."""
    make_user("alice")
    page = new_page()
    page.add_init_script("delete Intl.Segmenter;")
    log_in(page, "alice")
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
    assert counter(page, family * 41) == "7 characters too many"
    assert counter(page, family * 40) == "0 characters left"
    post(page, family * 40)
    assert statuses(page) == [family * 40]


def test_a_content_warning_counts_posts_folded_and_opens(compose):
    """Ticking "Add a content warning" shows its field; what is typed there counts
    with the text; unticked again it counts nothing and is not posted. The posted
    status shows the warning, and its text once the reader presses "Show more"."""
    limit = settings.STATUS_MAX_LENGTH
    assert not compose.locator("#id_spoiler").is_visible()
    compose.get_by_label("Add a content warning").check()
    compose.get_by_label("Content warning", exact=True).fill("Spoilers 😀")  # 10
    assert counter(compose, "x" * (limit - 10)) == "0 characters left"
    assert counter(compose, "x" * (limit - 9)) == "1 character too many"
    # Unticked, the warning is none: it counts nothing, and is not posted.
    compose.get_by_label("Add a content warning").uncheck()
    assert not compose.locator("#id_spoiler").is_visible()
    expect(compose.locator("#compose-counter")).to_have_text("9 characters left")
    post_with_box(compose, "unwarned")
    assert compose.locator("li.status details.spoiler").count() == 0
    compose.get_by_label("Add a content warning").check()
    compose.get_by_label("Content warning", exact=True).fill("Ending")
    post_with_box(compose, "the butler did it")
    row = compose.locator("li.status").first
    assert row.locator(".spoiler-text").inner_text() == "Ending"
    assert not row.locator(".status-text").is_visible()
    assert "Show more" in row.locator("summary").evaluate(
        "s => getComputedStyle(s.querySelector('.spoiler-show'), '::after').content"
    )
    row.locator("summary").click()
    assert row.locator(".status-text").inner_text() == "the butler did it"
    assert statuses(compose) == ["the butler did it", "unwarned"]


@pytest.mark.parametrize(
    "warning",
    ["\u200b\u200d", "\u2800 \ufe0f", "\u00ad\u3164\U000e0041", "\u202e\u2066"],
)
def test_a_warning_that_shows_nothing_counts_nothing(compose, warning):
    """A warning of invisible characters only is none on the server
    (`normalize_spoiler`): the counter counts it as nothing too, and Post takes a
    text that fills the limit, with no warning on it."""
    limit = settings.STATUS_MAX_LENGTH
    assert normalize_spoiler(warning) == ""
    compose.get_by_label("Add a content warning").check()
    compose.get_by_label("Content warning", exact=True).fill(warning)
    assert counter(compose, "x" * limit) == "0 characters left"
    post_with_box(compose, "x" * limit)
    assert statuses(compose) == ["x" * limit]
    assert compose.locator("li.status details.spoiler").count() == 0


def test_without_script_an_unticked_warning_is_not_posted(new_page):
    """Without the page's script the tick box still shows and hides the field (CSS),
    and the server posts the warning only while it is ticked (a folded <details>
    sent it all the same: found in review)."""
    make_user("alice")
    page = new_page(java_script_enabled=False)
    log_in(page, "alice")
    page.get_by_label("Add a content warning").check()
    page.get_by_label("Content warning", exact=True).fill("Typed, then dropped")
    page.get_by_label("Add a content warning").uncheck()
    assert not page.locator("#id_spoiler").is_visible()
    post_with_box(page, "no warning after all")
    assert page.locator("li.status details.spoiler").count() == 0
    assert statuses(page) == ["no warning after all"]
    page.get_by_label("Add a content warning").check()
    page.get_by_label("Content warning", exact=True).fill("Kept")
    post_with_box(page, "warned")
    assert page.locator("li.status .spoiler-text").all_inner_texts() == ["Kept"]


def post_with_box(page, text: str) -> None:
    """Post what the compose box holds, with `text` (the box's warning as set)."""
    page.get_by_label("What's happening?").fill(text)
    with page.expect_navigation():
        page.get_by_role("button", name="Post", exact=True).click()
