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
from timeline.domain import normalize_text, text_problem
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
    assert normalize_text(normal) == normal  # idempotent


@property_test(max_examples=100)
@given(any_text)
def test_the_length_rule_counts_code_points(text):
    normal = normalize_text(text)
    problem = text_problem(normal)
    if problem is None:
        assert 1 <= len(normal) <= settings.STATUS_MAX_LENGTH
        normal.encode()  # storable as UTF-8
    elif len(normal) > settings.STATUS_MAX_LENGTH and problem.startswith("A status"):
        assert f"(this one has {len(normal)})" in problem
    else:
        assert problem == "Write something first."


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
