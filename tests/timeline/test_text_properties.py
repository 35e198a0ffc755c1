"""Properties of the status text rule (timeline.domain) and the compose form, for
any input a person (or a script) can send."""

from __future__ import annotations

import html
import re
import unicodedata

import pytest
from django.conf import settings
from hypothesis import given
from hypothesis import strategies as st

from tests.helpers import logged_in_client, make_user, property_test
from timeline.domain import (
    RAW_LENGTH_FACTOR,
    normalize_text,
    text_length,
    text_problem,
    text_shows_something,
)
from timeline.forms import StatusForm

pytestmark = pytest.mark.fake_redis

# Every code point, lone surrogates included (a form never sends them; a service
# caller might), weighted towards the troublesome ones.
awkward = st.sampled_from(
    "\r\n\t\x00\x07\x0b\x0c\x1b\x7f\x85\u2028\u2029\u200b\u200d\u3164\ufeff"
    "\u2060\u00ad\u202e\ufe0f\u00a0\u3000 \U0001f600\ud800\udfff"
)
any_text = st.text(alphabet=st.one_of(st.characters(codec=None), awkward), max_size=400)
# What a form can carry: UTF-8, so no lone surrogates (`st.characters()` alone can
# draw them).
form_text = st.text(
    alphabet=st.one_of(
        st.characters(codec="utf-8"),
        awkward.filter(lambda c: unicodedata.category(c) != "Cs"),
    ),
    max_size=400,
)


@property_test(max_examples=100)
@given(any_text)
def test_normalized_text_has_no_control_characters_but_line_breaks(text):
    normal = normalize_text(text)
    assert all(c == "\n" or unicodedata.category(c) not in ("Cc", "Cs") for c in normal)
    assert normal == normal.strip()
    assert unicodedata.is_normalized("NFC", normal)  # however it was typed
    assert normalize_text(normal) == normal  # idempotent


# Texts with links among the rest (each counts 23, however long).
linked_text = st.lists(
    st.one_of(
        any_text,
        st.sampled_from(["https://example.com/", "www.example.org", "http://a.co "]),
        st.text(alphabet="ab/.", max_size=200).map(lambda s: f" https://x.y/{s} "),
    ),
    max_size=12,
).map("".join)


@property_test(max_examples=100)
@given(st.one_of(any_text, linked_text))
def test_the_length_rule_bounds_every_text_it_takes(text):
    normal = normalize_text(text)
    problem = text_problem(normal)
    limit = settings.STATUS_MAX_LENGTH
    if problem is None:
        assert 1 <= text_length(normal) <= limit
        assert len(normal) <= RAW_LENGTH_FACTOR * limit
        normal.encode()  # storable as UTF-8
    elif problem == "Write something first.":
        assert not text_shows_something(normal)
    elif len(normal) > RAW_LENGTH_FACTOR * limit:
        assert f"(this one has {len(normal)})" in problem
    else:
        assert text_length(normal) > limit
        assert problem.startswith(f"A status is at most {limit} characters")
        assert f"(this one has {text_length(normal)})" in problem


# What a reader sees as one character, of one code point or several (NFC keeps each
# several, and none joins the one before it): the rule counts each once.
one_character = st.sampled_from(
    [
        "x",
        "\u00e9",  # é, however typed (NFC)
        "e\u0301",
        "q\u0307\u0323",  # two accents no single code point holds
        "\u0915\u094d\u0937\u093f",  # a Devanagari conjunct and its vowel sign
        "\u1100\u1161\u11a8",  # a Hangul syllable from its letters (NFC: one)
        "\U0001f600",
        "\U0001f44d\U0001f3fd",  # a skin tone
        "\U0001f468\u200d\U0001f469\u200d\U0001f467\u200d\U0001f466",  # a family
        "\U0001f1eb\U0001f1f7",  # a flag
        "\U0001f3f4\U000e0067\U000e0062\U000e0073\U000e0063\U000e0074\U000e007f",
        "1\ufe0f\u20e3",  # a keycap
        "\u2764\ufe0f",
    ]
)


@property_test(max_examples=100)
@given(st.lists(one_character, min_size=1, max_size=400))
def test_the_length_rule_counts_what_shows_as_one_character_once(characters):
    text = "".join(characters)
    normal = normalize_text(text)
    assert text_length(normal) == len(characters)
    fits = len(characters) <= settings.STATUS_MAX_LENGTH
    assert (text_problem(normal) is None) == fits
    assert StatusForm({"text": text}).is_valid() == fits


@property_test(max_examples=100)
@given(form_text)
def test_the_form_and_the_rule_agree_and_never_raise(text):
    form = StatusForm({"text": text})
    valid = form.is_valid()
    problem = text_problem(normalize_text(text))
    if "\x00" not in text:  # Django's CharField refuses NUL itself
        assert valid == (problem is None)
    if valid:
        assert form.cleaned_data["text"] == normalize_text(text)
    else:
        assert form["text"].value() == text  # what was typed, for the page


@pytest.fixture
def poster():
    make_user("poster")
    return logged_in_client("poster", raise_request_exception=False)


@property_test(max_examples=50)
@given(form_text)
def test_posting_any_text_is_a_redirect_or_a_400_that_keeps_it(poster, settings, text):
    settings.RATE_LIMIT_POST = "off"  # one poster, many examples
    response = poster.post("/post/", {"text": text})
    assert response.status_code in (302, 400)
    if response.status_code == 400:
        page = response.content.decode()
        shown = re.search(r'<textarea name="text".*?>\n(.*?)</textarea>', page, re.S)
        assert html.unescape(shown.group(1)) == text


@property_test(max_examples=100)
@given(st.one_of(any_text, linked_text))
def test_local_handles_change_nothing_but_this_sites_handles(text):
    """The rewrite of `@name@thishost` keeps every other character as typed: a
    text without this site's handle comes back whole."""
    from timeline.richtext import local_handles

    assert local_handles(text, "site.invalid") == text
    written = local_handles(text + " @alice@site.invalid.", "site.invalid")
    assert written == text + " @alice."
