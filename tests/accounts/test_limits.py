"""Abuse limits: posting, following, signing up and logging in, as users meet them."""

from __future__ import annotations

import time

import pytest
from django.test import Client, RequestFactory

from accounts import limits
from accounts.domain import TooManyAttempts
from accounts.limits import Rate
from config.http import client_ip
from tests.helpers import PASSWORD, logged_in_client, make_user


def test_rates_parse_as_operators_write_them():
    assert limits.rates("30/5m,300/3h") == (Rate(30, 300), Rate(300, 10800))
    assert limits.rates("5/s") == (Rate(5, 1),)
    assert limits.rates(" 20 / 1d ") == (Rate(20, 86400),)
    assert limits.rates("off") == ()
    for bad in ("30", "0/5m", "30/5x", "30/0m", "-1/m", "x/m"):
        with pytest.raises(ValueError, match="N/period"):
            limits.rates(bad)


def test_a_rate_lets_its_burst_through_then_one_per_interval(settings):
    settings.RATE_LIMIT_POST = "3/6s"
    limit = limits.post(1)
    for _ in range(3):
        limits.take(limit)
    with pytest.raises(TooManyAttempts) as excinfo:
        limits.take(limit)
    assert excinfo.value.retry_after == 2  # one post every 2 s
    assert excinfo.value.action == "post"
    time.sleep(2.05)
    limits.take(limit)  # one more after period/N (the next one 2 s later)
    with pytest.raises(TooManyAttempts):
        limits.take(limit)


def test_every_rate_of_a_limit_counts_or_none_does(r, settings):
    settings.RATE_LIMIT_FOLLOW = "2/1m,3/1h"
    limit = limits.follow(7)
    limits.take(limit)
    limits.take(limit)
    before = {key: r.get(key) for key in r.scan_iter("limit:*")}
    with pytest.raises(TooManyAttempts) as excinfo:
        limits.take(limit)
    assert 0 < excinfo.value.retry_after <= 30
    # The refusal spent nothing: the hourly budget still has its third follow.
    assert {key: r.get(key) for key in r.scan_iter("limit:*")} == before


def test_a_refusal_by_one_limit_gives_back_what_the_others_took(r, settings):
    settings.RATE_LIMIT_LOGIN_PAIR = "5/5m"
    settings.RATE_LIMIT_LOGIN_CLIENT = "1/5m"
    pair, client = limits.login_pair("amy", "1.2.3.4"), limits.login_client("1.2.3.4")
    limits.take(client)
    with pytest.raises(TooManyAttempts):
        limits.take(pair, client)
    # The pair's budget is whole: its key is gone.
    assert [k for k in r.scan_iter("limit:*") if "n:amy" in k] == []


def test_limit_keys_expire_when_the_budget_is_whole_again(r, settings):
    settings.RATE_LIMIT_POST = "30/5m,300/3h"
    limits.take(limits.post(3))
    ttls = sorted(r.pttl(key) for key in r.scan_iter("limit:*"))
    # One post of 30 per 5 min is 10 s; of 300 per 3 h, 36 s.
    assert len(ttls) == 2
    assert 9_000 < ttls[0] <= 10_000 and 35_000 < ttls[1] <= 36_000


def test_a_users_limit_keys_sit_in_the_users_slot(r, settings):
    from redis.crc import key_slot

    from accounts import keys

    limits.take(limits.post(42), limits.follow(42))
    slots = {key_slot(k.encode()) for k in r.scan_iter("limit:*")}
    assert slots == {key_slot(keys.user(42).encode())}


def test_posting_too_fast_answers_429_and_keeps_the_text(settings):
    settings.RATE_LIMIT_POST = "2/5m"
    make_user("poe")
    client = logged_in_client("poe")
    for i in range(2):
        assert client.post("/post/", {"text": f"status {i}"}).status_code == 302
    response = client.post("/post/", {"text": "one too many"})
    assert response.status_code == 429
    assert 149 <= int(response["Retry-After"]) <= 150
    page = response.content.decode()
    assert "You are posting too fast" in page
    assert "post it in 3 minutes" in page
    assert ">\none too many</textarea>" in page
    profile = client.get("/u/poe/").content.decode()
    assert "status 0" in profile and "status 1" in profile
    assert "one too many" not in profile


def test_following_too_fast_answers_429_and_changes_nothing(settings):
    settings.RATE_LIMIT_FOLLOW = "2/1m"
    make_user("fay")
    for name in ("ann", "bob", "cat"):
        make_user(name)
    client = logged_in_client("fay")
    assert client.post("/u/ann/follow/").status_code == 302
    assert client.post("/u/bob/follow/").status_code == 302
    response = client.post("/u/cat/follow/")
    assert response.status_code == 429
    assert response["Retry-After"] == "30"
    page = response.content.decode()
    assert "followed and unfollowed too many people" in page
    assert "Nothing was changed: try again in 30 seconds." in page
    following = client.get("/u/fay/following/").content.decode()
    assert "ann" in following and "bob" in following and "/u/cat/" not in following


def test_signups_from_one_address_are_limited(r, settings):
    settings.RATE_LIMIT_SIGNUP = "2/10m"
    for name in ("one_1", "two_2"):
        response = Client().post(
            "/signup/", {"username": name, "password": PASSWORD, "password2": PASSWORD}
        )
        assert response.status_code == 302
    response = Client().post(
        "/signup/", {"username": "three_3", "password": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 429
    assert int(response["Retry-After"]) == 300
    page = response.content.decode()
    assert "Too many accounts were created from your network lately" in page
    assert 'value="three_3"' in page
    assert r.get("username:three_3") is None
    # Another address signs up as usual.
    response = Client(REMOTE_ADDR="10.9.8.7").post(
        "/signup/", {"username": "four_4", "password": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 302


@pytest.mark.parametrize(
    ("header", "count", "meta", "expected"),
    [
        ("", 1, {"HTTP_X_FORWARDED_FOR": "6.6.6.6"}, "10.0.0.1"),
        ("X-Forwarded-For", 1, {"HTTP_X_FORWARDED_FOR": "6.6.6.6, 1.2.3.4"}, "1.2.3.4"),
        (
            "X-Forwarded-For",
            2,
            {"HTTP_X_FORWARDED_FOR": "6.6.6.6, 1.2.3.4, 10.0.0.2"},
            "1.2.3.4",
        ),
        ("X-Forwarded-For", 2, {"HTTP_X_FORWARDED_FOR": "1.2.3.4"}, "10.0.0.1"),
        ("X-Forwarded-For", 1, {}, "10.0.0.1"),
        ("X-Real-IP", 1, {"HTTP_X_REAL_IP": "5.5.5.5"}, "5.5.5.5"),
        ("X-Forwarded-For", 1, {"HTTP_X_FORWARDED_FOR": "not-an-ip"}, "unknown"),
        (
            "X-Forwarded-For",
            1,
            {"HTTP_X_FORWARDED_FOR": "2001:db8:1:2:3:4:5:6"},
            "2001:db8:1:2:3:4:5:6",
        ),
        ("X-Forwarded-For", 1, {"HTTP_X_FORWARDED_FOR": "::ffff:1.2.3.4"}, "1.2.3.4"),
        # Some proxies write the client's port too.
        ("X-Forwarded-For", 1, {"HTTP_X_FORWARDED_FOR": "1.2.3.4:5678"}, "1.2.3.4"),
        (
            "X-Forwarded-For",
            1,
            {"HTTP_X_FORWARDED_FOR": "[2001:db8::1]:443"},
            "2001:db8::1",
        ),
        (
            "X-Forwarded-For",
            1,
            {"HTTP_X_FORWARDED_FOR": "[2001:db8::2]"},
            "2001:db8::2",
        ),
    ],
)
def test_client_ip_trusts_only_our_own_proxies(settings, header, count, meta, expected):
    settings.TRUSTED_PROXY_HEADER = header
    settings.TRUSTED_PROXY_COUNT = count
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", **meta)
    assert client_ip(request) == expected


def test_an_unreadable_client_address_is_said_once_in_the_log(settings, caplog):
    from config import http

    http._unknown_said = False
    request = RequestFactory().get("/", REMOTE_ADDR="")  # say, a Unix socket
    with caplog.at_level("WARNING", logger="config.http"):
        assert client_ip(request) == "unknown"
        assert client_ip(request) == "unknown"
    said = [r.getMessage() for r in caplog.records if r.name == "config.http"]
    assert len(said) == 1
    assert "share one budget" in said[0] and "TRUSTED_PROXY_HEADER" in said[0]


def test_behind_a_proxy_each_visitor_has_their_own_login_budget(settings):
    settings.TRUSTED_PROXY_HEADER = "X-Forwarded-For"
    settings.RATE_LIMIT_LOGIN_CLIENT = "3/5m"
    make_user("zed")
    guesser = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6")
    for i in range(3):
        guesser.post("/login/", {"username": f"who{i}", "password": "bad"})
    assert (
        guesser.post("/login/", {"username": "zed", "password": PASSWORD}).status_code
        == 429
    )
    # Behind the same proxy (same REMOTE_ADDR), the owner is someone else.
    owner = Client(REMOTE_ADDR="127.0.0.1", HTTP_X_FORWARDED_FOR="1.2.3.4")
    response = owner.post("/login/", {"username": "zed", "password": PASSWORD})
    assert response.status_code == 302


def test_an_ipv6_client_counts_as_its_64_network(r, settings):
    settings.RATE_LIMIT_SIGNUP = "1/10m"
    limits.take(limits.signup("2001:db8:1:2:aaaa::1"))
    with pytest.raises(TooManyAttempts):
        limits.take(limits.signup("2001:db8:1:2:bbbb::2"))  # same /64
    limits.take(limits.signup("2001:db8:1:3::1"))  # another network
    limits.take(limits.signup("not an address\r\n{x}"))
    assert sorted(k.split("{")[1] for k in r.scan_iter("limit:*")) == [
        "c:2001:db8:1:2::/64}",
        "c:2001:db8:1:3::/64}",
        "c:unknown}",
    ]
