"""Bad input and faults: what a visitor sees when a request is malformed or Redis is
down, never a 500."""

from __future__ import annotations

import logging

import pytest
import redis
from django.conf import settings
from django.test import Client

from config.redis import set_redis
from tests.helpers import logged_in_client, make_user
from timeline import services as timeline_services

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


FORM = b"username=someone&password=correct-horse-battery"


def _post_form(client: Client, charset: str, path: str = "/login/"):
    return client.generic(
        "POST",
        path,
        FORM,
        content_type=f"application/x-www-form-urlencoded; charset={charset}",
    )


@pytest.fixture
def log_lines(caplog):
    """Every record logged at WARNING or above, django.request's too (it does not
    propagate to the root logger that caplog listens on)."""
    request_logger = logging.getLogger("django.request")
    request_logger.addHandler(caplog.handler)
    yield lambda: [r for r in caplog.records if r.levelno >= logging.WARNING]
    request_logger.removeHandler(caplog.handler)


@pytest.mark.parametrize("charset", ["utf-7", "UTF-16", "utf-32", "latin-1"])
def test_form_in_another_charset_is_a_short_400_with_one_log_line(charset, log_lines):
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.get("/login/")  # a CSRF cookie, as a browser would have
    response = _post_form(client, charset)
    assert response.status_code == 400
    body = response.content.decode()
    assert "Bad request" in body and "UTF-8" in body
    lines = log_lines()
    assert len(lines) == 1, [r.getMessage() for r in lines]
    assert lines[0].exc_info is None
    assert charset in lines[0].getMessage() and "/login/" in lines[0].getMessage()


@pytest.mark.parametrize("charset", ["utf-8", "UTF8", "no-such-charset"])
def test_form_in_utf8_or_an_unknown_charset_name_is_not_refused_as_such(charset):
    # An unknown name is what Django ignores, reading the form as UTF-8 (what every
    # browser sends): it is not refused for its label.
    make_user("someone")
    response = _post_form(Client(), charset)
    assert response.status_code == 302


def test_any_other_unreadable_form_is_a_400_not_a_500(settings):
    settings.DATA_UPLOAD_MAX_NUMBER_FIELDS = 3
    client = Client(enforce_csrf_checks=True, raise_request_exception=False)
    client.get("/login/")
    response = client.post("/login/", {f"f{i}": "x" for i in range(10)})
    assert response.status_code == 400
    assert "Bad request" in response.content.decode()


def test_outage_on_a_read_says_nothing_was_changed():
    client = _signed_in_client_then_outage()
    response = client.get("/")
    assert response.status_code == 503
    text = " ".join(response.content.decode().split())
    assert "Nothing was changed" in text
    assert "saved" not in text


def test_outage_in_the_middle_of_a_post_says_it_may_or_may_not_be_saved(
    monkeypatch,
):
    make_user("midway")
    client = logged_in_client("midway")

    def outage(build):
        raise redis.ConnectionError("Redis stopped answering")

    # The status's id was taken (the first write); storing it fails.
    monkeypatch.setattr(timeline_services, "pipeline_run", outage)
    response = client.post("/post/", {"text": "half there"})
    assert response.status_code == 503
    assert response["Retry-After"] == "30"
    text = " ".join(response.content.decode().split())
    assert "may or may not have been saved" in text
    assert "complete" in text and "before sending it again" in text
    assert "Nothing was changed" not in text
