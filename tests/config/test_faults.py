"""Bad input and faults: what a visitor sees when a request is malformed or Redis is
down, never a 500."""

from __future__ import annotations

import redis
from django.conf import settings
from django.test import Client

from config.redis import set_redis
from tests.helpers import logged_in_client, make_user

COOKIE = settings.AUTH_COOKIE_NAME


def _redis_down() -> None:
    set_redis(
        redis.Redis.from_url(
            "unix:///nonexistent/redis.sock",
            socket_connect_timeout=0.2,
            decode_responses=True,
        )
    )


def _signed_in_client_then_outage(**kwargs) -> Client:
    make_user("outage")
    client = logged_in_client("outage", **kwargs)
    _redis_down()
    return client


def test_unknown_page_is_404_for_a_signed_in_visitor_while_redis_is_down():
    client = _signed_in_client_then_outage()
    response = client.get("/no/such/page/")
    assert response.status_code == 404
    assert "Not found" in response.content.decode()
    # Not proven wrong, only unread: the visitor stays signed in for later.
    assert COOKIE not in response.cookies


def test_not_found_page_still_shows_who_is_signed_in_when_redis_answers():
    make_user("here")
    body = logged_in_client("here").get("/no/such/page/").content.decode()
    assert 'href="/u/here/"' in body and 'action="/logout/"' in body


def test_bad_status_address_is_404_for_a_signed_in_visitor_while_redis_is_down():
    client = _signed_in_client_then_outage()
    response = client.get("/s/abc/")
    assert response.status_code == 404
    assert "Not found" in response.content.decode()


def test_form_without_csrf_token_is_403_for_a_signed_in_visitor_while_redis_is_down():
    client = _signed_in_client_then_outage(enforce_csrf_checks=True)
    response = client.post("/post/", {"text": "hello"})
    assert response.status_code == 403
    assert "This form has expired" in response.content.decode()
