"""Properties of the username rule and the account forms, for any input."""

from __future__ import annotations

import re
from html import unescape

import pytest
from django.test import Client
from hypothesis import given
from hypothesis import strategies as st

from accounts import services
from accounts.domain import (
    RESERVED_USERNAMES,
    InvalidUsername,
    UsernameTaken,
    username_problem,
)
from accounts.forms import LoginForm, SignupForm
from tests.helpers import PASSWORD, property_test

pytestmark = pytest.mark.fake_redis

# Names near the rule's edges as well as anything at all.
names = st.one_of(
    st.text(max_size=40),
    st.from_regex(r"\A[A-Za-z0-9_]{1,32}\Z"),
    st.sampled_from(sorted(RESERVED_USERNAMES)),
)


def any_case(draw_source):
    return draw_source.flatmap(
        lambda name: st.lists(
            st.booleans(), min_size=len(name), max_size=len(name)
        ).map(
            lambda upper: "".join(
                c.upper() if u else c.lower() for c, u in zip(name, upper, strict=True)
            )
        )
    )


@property_test(max_examples=100)
@given(names)
def test_the_signup_form_and_the_service_agree_on_every_name(name):
    form = SignupForm({"username": name, "password": PASSWORD, "password2": PASSWORD})
    form_refuses = "username" in (form.errors if not form.is_valid() else {})
    try:
        services.user_create(username=name, password=PASSWORD)
        service_refuses = False
    except InvalidUsername:
        service_refuses = True
    except UsernameTaken:
        service_refuses = False  # a valid name, made by an earlier example
    # The form strips surrounding blanks before its rule; the service takes what
    # it is given.
    if name == name.strip():
        assert form_refuses == service_refuses == (username_problem(name) is not None)


@property_test(max_examples=80)
@given(any_case(st.sampled_from(sorted(RESERVED_USERNAMES))))
def test_reserved_names_are_refused_in_any_case(name):
    assert username_problem(name) is not None
    form = SignupForm({"username": name, "password": PASSWORD, "password2": PASSWORD})
    assert not form.is_valid() and "username" in form.errors
    with pytest.raises(InvalidUsername):
        services.user_create(username=name, password=PASSWORD)


@property_test(max_examples=100)
@given(st.text(max_size=60), st.text(max_size=60), st.text(max_size=60))
def test_account_forms_never_raise_and_keep_the_typed_name(name, password, again):
    for form in (
        SignupForm({"username": name, "password": password, "password2": again}),
        LoginForm({"username": name, "password": password}),
    ):
        if not form.is_valid():
            assert form["username"].value() == name


def shown_username(page: str) -> str | None:
    found = re.search(r'<input type="text" name="username"(?: value="([^"]*)")?', page)
    assert found is not None
    return unescape(found.group(1)) if found.group(1) is not None else None


@property_test(max_examples=50)
@given(st.text(min_size=1, max_size=40).filter(lambda s: s.strip()))
def test_signup_and_login_pages_answer_any_name_without_a_500(settings, name):
    settings.RATE_LIMIT_LOGIN_PAIR = settings.RATE_LIMIT_LOGIN_CLIENT = (
        "off"  # all fail
    )
    client = Client(raise_request_exception=False)
    signup = client.post(
        "/signup/", {"username": name, "password": "x", "password2": "y"}
    )
    assert signup.status_code == 400  # the passwords differ, whatever the name
    assert shown_username(signup.content.decode()) == name
    login = Client(raise_request_exception=False).post(
        "/login/", {"username": name, "password": "wrong"}
    )
    assert login.status_code == 400
    assert shown_username(login.content.decode()) == name
