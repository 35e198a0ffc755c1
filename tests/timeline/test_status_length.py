"""The status length rule as an author meets it, on the site and through the service
(`timeline.domain.text_problem`, the one rule both apply): a character is what a
reader sees as one (a grapheme cluster: a family emoji, a flag, a letter with its
accents), and a link counts as 23 characters however long, as the client API tells
apps (`characters_reserved_per_url`) and as they count before they offer to post;
written out, a text may be at most RAW_LENGTH_FACTOR times the limit in code points."""

from __future__ import annotations

import html

import pytest
from django.conf import settings

from tests.helpers import body, logged_in_client, make_user, page, run_jobs
from timeline import keys, services
from timeline.domain import RAW_LENGTH_FACTOR, URL_LENGTH, InvalidStatus

LONG_URL = "https://example.com/" + "a" * 100
# What a reader sees as one character, written with several code points (NFC keeps
# them several): a family (four people joined by three zero-width joiners), a flag
# (two regional indicators), Scotland's flag (a black flag and six tag characters),
# a keycap, a letter with two accents that no single code point holds (in the order
# NFC stores them), a Devanagari conjunct with its vowel sign.
FAMILY = "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466"
ONE_CHARACTER_EACH = [
    FAMILY,
    "\U0001f1eb\U0001f1f7",
    "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
    "1\ufe0f\u20e3",
    "q\u0323\u0307",
    "\u0915\u094d\u0937\u093f",
]
# The longest emoji Unicode recommends: a kiss with two skin tones, ten code points.
KISS = (
    "\U0001f469\U0001f3fc\u200d\u2764\ufe0f\u200d\U0001f48b\u200d\U0001f468\U0001f3ff"
)


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


@pytest.mark.parametrize("one", ONE_CHARACTER_EACH)
def test_what_shows_as_one_character_counts_as_one(r, alice, one):
    """As Mastodon counts (and its apps, which offer to post 280 of them): 280 are
    taken and stored whole, 281 refused, the count in the reason."""
    limit = settings.STATUS_MAX_LENGTH
    status = services.status_create(author=alice, text=one * limit)
    assert r.hget(keys.status(status.id), "text") == one * limit
    with pytest.raises(InvalidStatus) as refused:
        services.status_create(author=alice, text=one * (limit + 1))
    assert str(refused.value) == (
        f"A status is at most {limit} characters (this one has {limit + 1})."
    )
    assert r.zcard(keys.posts(alice.id)) == 1


def test_the_longest_emoji_fit_written_out(r, alice):
    """The bound on a text written out (in code points) leaves room for 280 of the
    longest emoji; one more is refused by that bound, before it is counted."""
    limit = settings.STATUS_MAX_LENGTH
    raw_limit = RAW_LENGTH_FACTOR * limit
    assert len(KISS) * limit == raw_limit
    status = services.status_create(author=alice, text=KISS * limit)
    assert r.hget(keys.status(status.id), "text") == KISS * limit
    with pytest.raises(InvalidStatus) as refused:
        services.status_create(author=alice, text=KISS * (limit + 1))
    # No link in it: the reason speaks of what it counts, not of links.
    assert str(refused.value) == (
        f"A status is at most {limit} characters, and {raw_limit} counting each "
        f"part of an emoji or accent on its own (this one has "
        f"{raw_limit + len(KISS)})."
    )


def test_emoji_and_a_link_count_together(r, alice):
    text = FAMILY * (settings.STATUS_MAX_LENGTH - URL_LENGTH - 1) + " " + LONG_URL
    services.status_create(author=alice, text=text)
    with pytest.raises(InvalidStatus) as refused:
        services.status_create(author=alice, text=FAMILY + text)
    assert str(refused.value).endswith(
        f"a link counting as 23 (this one has {settings.STATUS_MAX_LENGTH + 1})."
    )


def test_a_pile_of_accents_on_one_letter_is_refused(r, alice):
    """One character as read, thousands of code points as stored: the bound on a
    text written out still refuses it."""
    text = "a" + "\u0301\u0323" * 2000
    with pytest.raises(InvalidStatus) as refused:
        services.status_create(author=alice, text=text)
    raw_limit = RAW_LENGTH_FACTOR * settings.STATUS_MAX_LENGTH
    assert f"and {raw_limit} counting each part of an emoji or accent" in str(
        refused.value
    )
    assert r.zcard(keys.posts(alice.id)) == 0


def test_the_site_posts_280_family_emoji_and_shows_them_whole(r, alice):
    client = logged_in_client("alice")
    limit = settings.STATUS_MAX_LENGTH
    assert client.post("/post/", {"text": FAMILY * limit}).status_code == 302
    run_jobs()
    assert FAMILY * limit in page(client, "/")
    refused = client.post("/post/", {"text": FAMILY * (limit + 1)})
    assert refused.status_code == 400
    assert f"A status is at most {limit} characters (this one has {limit + 1})." in (
        body(refused)
    )
    assert r.zcard(keys.posts(alice.id)) == 1


@pytest.mark.parametrize(
    ("handle", "counted"),
    [
        ("@bob@mastodon.social", "@bob"),
        ("@Some_One@sub.example-host.org", "@Some_One"),
        ("@ab@x.io", "@ab"),  # another server's names may be shorter than ours
        ("@first.last@example.com", "@first.last"),  # or hold dots
        # A domain's vowel signs and viramas (combining marks) are part of it, as
        # Mastodon's [[:word:]] holds them: an Indian and a Tamil top-level domain.
        ("@ravi@\u0938\u0930\u0915\u093e\u0930.\u092d\u093e\u0930\u0924", "@ravi"),
        ("@kumar@example.\u0b87\u0ba8\u0bcd\u0ba4\u0bbf\u0baf\u0bbe", "@kumar"),
        ("@bob@a\u203fb.example", "@bob"),  # and a connector, as `_` is
        # A number that is not a digit (circled one, superscript two) does not end a
        # word for Mastodon: a handle right after one is a handle.
        ("\u2460@bob@example.com", "\u2460@bob"),
        ("x\u00b2@bob@example.com", "x\u00b2@bob"),
    ],
)
def test_another_servers_handle_counts_as_its_name(r, alice, handle, counted):
    """As Mastodon and its apps count: `@user@domain` counts as `@user` (the domain
    is never shown in a mention), so a text an app shows as fitting is taken."""
    limit = settings.STATUS_MAX_LENGTH
    text = "x" * (limit - len(counted) - 2) + f" {handle}."
    status = services.status_create(author=alice, text=text)
    assert r.hget(keys.status(status.id), "text") == text  # stored as written
    with pytest.raises(InvalidStatus) as refused:
        services.status_create(author=alice, text="x" + text)
    assert f"(this one has {limit + 1})" in str(refused.value)


@pytest.mark.parametrize(
    "text",
    [
        "mail me at bob@example.com",  # an address: no handle, counted in full
        "see https://example.com/@bob@example.com",  # inside a link: the link's 23
        "x@bob@example.com",  # after a word: no handle, as Mastodon finds none
        "@bob@-",  # no domain
        "@bob@",
    ],
)
def test_what_is_not_a_handle_counts_as_written(text):
    from timeline.domain import text_length
    from timeline.richtext import links

    counted = len(text)
    for link in links(text):
        counted += URL_LENGTH - len(link)
    assert text_length(text) == counted
