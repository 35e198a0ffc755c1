"""The page's CSRF token: made with one read of the OS's random source, and still
exactly what Django's CSRF middleware expects."""

from __future__ import annotations

import re

from django.middleware.csrf import CSRF_ALLOWED_CHARS, _unmask_cipher_token
from django.test import Client

from tests.helpers import PASSWORD, make_user


def form_token(html: str) -> str:
    return re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html).group(1)


def test_each_page_masks_the_cookie_secret_afresh_and_the_form_is_accepted():
    client = Client(enforce_csrf_checks=True)
    first = form_token(client.get("/signup/").content.decode())
    secret = client.cookies["csrftoken"].value
    second = form_token(client.get("/signup/").content.decode())
    assert first != second
    assert len(secret) == 32 and set(secret) <= set(CSRF_ALLOWED_CHARS)
    assert _unmask_cipher_token(first) == _unmask_cipher_token(second) == secret
    response = client.post(
        "/signup/",
        {
            "username": "masked",
            "password": PASSWORD,
            "password2": PASSWORD,
            "csrfmiddlewaretoken": second,
        },
    )
    assert response.status_code == 302


def test_a_new_visitor_gets_a_new_secret_each():
    secrets = set()
    for _ in range(20):
        client = Client()
        client.get("/login/")
        secrets.add(client.cookies["csrftoken"].value)
    assert len(secrets) == 20


def test_a_tampered_token_is_refused():
    client = Client(enforce_csrf_checks=True)
    token = form_token(client.get("/signup/").content.decode())
    tampered = token[:-1] + ("a" if token[-1] != "a" else "b")
    data = {"username": "x" * 5, "password": PASSWORD, "password2": PASSWORD}
    response = client.post("/signup/", {**data, "csrfmiddlewaretoken": tampered})
    assert response.status_code == 403


def test_a_returning_visitor_keeps_the_secret_and_the_cookie_is_renewed():
    client = Client()
    client.get("/login/")
    secret = client.cookies["csrftoken"].value
    again = client.get("/login/")
    assert again.cookies["csrftoken"].value == secret  # sent again: its age renewed
    assert _unmask_cipher_token(form_token(again.content.decode())) == secret


def _csrf_secret_after(client: Client, response) -> str:
    cookie = response.cookies.get("csrftoken")
    return cookie.value if cookie is not None else client.cookies["csrftoken"].value


def test_login_gives_a_new_csrf_secret_and_the_new_pages_forms_work():
    make_user("rotor")
    client = Client(enforce_csrf_checks=True)
    token = form_token(client.get("/login/").content.decode())
    before = client.cookies["csrftoken"].value
    response = client.post(
        "/login/",
        {"username": "rotor", "password": PASSWORD, "csrfmiddlewaretoken": token},
    )
    assert response.status_code == 302
    after = _csrf_secret_after(client, response)
    assert after != before and len(after) == 32
    # The token a page showed before the login is refused now; the new page's works.
    assert client.post("/logout/", {"csrfmiddlewaretoken": token}).status_code == 403
    fresh = form_token(client.get("/").content.decode())
    assert client.post("/logout/", {"csrfmiddlewaretoken": fresh}).status_code == 302


def test_signup_gives_a_new_csrf_secret():
    client = Client(enforce_csrf_checks=True)
    token = form_token(client.get("/signup/").content.decode())
    before = client.cookies["csrftoken"].value
    response = client.post(
        "/signup/",
        {
            "username": "rotated",
            "password": PASSWORD,
            "password2": PASSWORD,
            "csrfmiddlewaretoken": token,
        },
    )
    assert response.status_code == 302
    assert _csrf_secret_after(client, response) != before
