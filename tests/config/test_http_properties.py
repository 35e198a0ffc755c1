"""Cursor parameters (`config.http.int_param`): any string is None, a number or a
404, never a 500."""

from __future__ import annotations

import pytest
from django.http import Http404
from django.test import Client, RequestFactory
from hypothesis import given
from hypothesis import strategies as st

from config.http import int_param
from tests.helpers import property_test

pytestmark = pytest.mark.fake_redis

cursors = st.one_of(
    st.text(max_size=30),
    st.integers(min_value=-(2**70), max_value=2**70).map(str),
    st.sampled_from(["", "0", "00", "٣", "²", "1e3", " 1", "1 ", "+1", "-1", "9" * 17]),
)


@property_test(max_examples=100)
@given(cursors)
def test_any_cursor_string_is_none_a_number_or_a_404(raw):
    request = RequestFactory().get("/", {"max_id": raw})
    try:
        value = int_param(request, "max_id")
    except Http404:
        assert raw and not (raw.isascii() and raw.isdigit() and int(raw) <= 2**53)
        return
    if raw == "":
        assert value is None
    else:
        assert value == int(raw) and 0 <= value <= 2**53 and raw.isascii()


@property_test(max_examples=50)
@given(cursors)
def test_timeline_pages_answer_any_cursor_with_200_or_404(raw):
    client = Client(raise_request_exception=False)
    for path, name in (("/timeline/", "max_id"), ("/", "max_id")):
        assert client.get(path, {name: raw}).status_code in (200, 404)
