"""The settings page: change the password, see and log out devices."""

from __future__ import annotations

import re

import pytest
from django.conf import settings
from django.contrib.auth.hashers import check_password
from django.test import Client

from accounts import keys, selectors, services
from tests.config.test_csrf import form_token
from tests.helpers import PASSWORD, make_user
from tests.roundtrips import RoundTripCounter

COOKIE = settings.AUTH_COOKIE_NAME
NEW_PASSWORD = "a-brand-new-passphrase"
FIREFOX_LINUX = "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0"
SAFARI_IPHONE = (
    "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 "
    "(KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1"
)


def device(username: str, user_agent: str = "", address: str = "127.0.0.1", **kw):
    """A browser that logged in through the login page, as `user_agent` from
    `address` (`kw`: the test client's own options, e.g. CSRF checks)."""
    headers = {"HTTP_USER_AGENT": user_agent, "REMOTE_ADDR": address}
    response = Client(**headers).post(
        "/login/", {"username": username, "password": PASSWORD}
    )
    assert response.status_code == 302, response.content
    client = Client(**headers, **kw)
    client.cookies[COOKIE] = response.cookies[COOKIE].value
    return client


def body(response) -> str:
    return response.content.decode()


def signed_in(client: Client) -> bool:
    return 'action="/logout/"' in body(client.get("/"))


def device_ids(page: str) -> list[str]:
    return re.findall(r'name="device" value="([0-9a-f]{64})"', page)


def change_password(client: Client, current=PASSWORD, new=NEW_PASSWORD, again=None):
    return client.post(
        "/settings/password/",
        {
            "current_password": current,
            "new_password": new,
            "new_password2": again or new,
        },
    )


def can_log_in(username: str, password: str) -> bool:
    response = Client().post("/login/", {"username": username, "password": password})
    return response.status_code == 302


@pytest.fixture
def alice():
    return make_user("alice")


def test_signed_in_navigation_links_to_settings(alice):
    assert 'href="/settings/"' in body(device("alice").get("/"))
    assert 'href="/settings/"' not in body(Client().get("/"))


def test_settings_requires_login():
    response = Client().get("/settings/")
    assert response.status_code == 302
    assert response["Location"] == "/login/?next=%2Fsettings%2F"


def test_password_change_logs_out_other_devices_and_keeps_this_one(alice):
    this, other = device("alice"), device("alice")
    old_cookie = this.cookies[COOKIE].value
    response = change_password(this)
    assert response.status_code == 302 and response["Location"] == "/settings/"
    assert response.cookies[COOKIE].value != old_cookie  # a fresh token
    page = body(this.get("/settings/"))
    assert "Password changed. Your other devices are logged out." in page
    assert signed_in(this)
    assert not signed_in(other)
    stolen = Client()
    stolen.cookies[COOKIE] = old_cookie  # this device's old cookie dies too
    assert not signed_in(stolen)
    assert not can_log_in("alice", PASSWORD)
    assert can_log_in("alice", NEW_PASSWORD)


def test_wrong_current_password_is_an_error_and_a_failed_login(alice, r, settings):
    settings.RATE_LIMIT_LOGIN_PAIR = "2/5m"
    this, other = device("alice"), device("alice")
    response = change_password(this, current="not-my-password")
    assert response.status_code == 400
    page = body(response)
    assert "That is not your current password." in page
    assert "not-my-password" not in page and NEW_PASSWORD not in page
    assert signed_in(this) and signed_in(other)
    change_password(this, current="wrong-again")  # the limit: 2 failures
    response = change_password(this)  # even the right password waits now
    assert response.status_code == 429
    assert "Too many failed attempts." in body(response)
    assert int(response["Retry-After"]) > 0
    login = Client().post("/login/", {"username": "alice", "password": PASSWORD})
    assert login.status_code == 429  # the login page counts them too
    assert check_password(PASSWORD, r.hget(keys.user(alice.id), "password"))
    assert signed_in(this) and signed_in(other)


def test_new_password_runs_the_signup_validators_and_must_match(alice):
    this = device("alice")
    weak = change_password(this, new="12345678")
    assert weak.status_code == 400
    assert "This password is too common." in body(weak)
    differ = change_password(this, again="something-else-entirely")
    assert differ.status_code == 400
    assert "The two passwords differ." in body(differ)
    like_name = change_password(this, new="alice")
    assert "too similar to the username" in body(like_name)
    assert can_log_in("alice", PASSWORD)


def test_devices_list_shows_each_device_and_marks_this_one(alice):
    firefox = device("alice", FIREFOX_LINUX, "203.0.113.7")
    safari = device("alice", SAFARI_IPHONE, "2001:db8::1")
    page = body(firefox.get("/settings/"))
    assert page.count('class="device"') == 2
    assert "Firefox on Linux" in page and "Safari on iPhone" in page
    assert "203.0.113.7" in page and "2001:db8::1" in page
    # "This device" sits on Firefox's entry, which logs out through /logout/.
    this = re.search(
        r'<li class="device">((?:(?!</li>).)*This device.*?)</li>', page, re.S
    )
    assert "Firefox on Linux" in this.group(1) and 'action="/logout/"' in this.group(1)
    other = body(safari.get("/settings/"))
    this = re.search(
        r'<li class="device">((?:(?!</li>).)*This device.*?)</li>', other, re.S
    )
    assert "Safari on iPhone" in this.group(1)
    assert firefox.cookies[COOKIE].value.split(":")[1] not in page  # never the token


def test_logging_out_one_device_kills_exactly_that_one(alice):
    this = device("alice", FIREFOX_LINUX)
    doomed = device("alice", SAFARI_IPHONE)
    kept = device("alice", "curl/8.5.0")
    page = body(this.get("/settings/"))
    doomed_id = selectors.token_hash(doomed.cookies[COOKIE].value.split(":")[1])
    assert doomed_id in device_ids(page) and len(device_ids(page)) == 2
    response = this.post("/settings/devices/logout/", {"device": doomed_id})
    assert response.status_code == 302 and response["Location"] == "/settings/"
    page = body(this.get("/settings/"))
    assert "That device is logged out." in page
    assert "Safari on iPhone" not in page and "curl" in page
    assert not signed_in(doomed)
    assert signed_in(this) and signed_in(kept)
    again = this.post("/settings/devices/logout/", {"device": doomed_id})
    assert "That device was already logged out." in body(this.get(again["Location"]))


def test_another_users_device_id_does_nothing_to_it(alice, r):
    make_user("mallory")
    victim = device("alice")
    victim_id = selectors.token_hash(victim.cookies[COOKIE].value.split(":")[1])
    mallory = device("mallory")
    response = mallory.post("/settings/devices/logout/", {"device": victim_id})
    assert response.status_code == 302
    assert "That device was already logged out." in body(mallory.get("/settings/"))
    assert signed_in(victim)
    assert r.hexists(keys.devices(alice.id), victim_id)


@pytest.mark.parametrize(
    "bad", ["", "x", "a" * 63, "A" * 64, "../" + "a" * 61, "*", "a" * 64 + "\n"]
)
def test_a_malformed_device_id_changes_nothing(alice, r, bad):
    this, other = device("alice"), device("alice")
    before = r.hgetall(keys.sessions(alice.id)), r.hgetall(keys.devices(alice.id))
    response = this.post("/settings/devices/logout/", {"device": bad})
    assert response.status_code == 302
    assert "That device was already logged out." in body(this.get("/settings/"))
    after = r.hgetall(keys.sessions(alice.id)), r.hgetall(keys.devices(alice.id))
    assert after == before and signed_in(other)


def test_get_changes_nothing(alice, r):
    this = device("alice")
    this.get("/")  # the day's last-seen stamp, the one write a GET may make
    before = {key: r.dump(key) for key in r.scan_iter()}
    for url in ("/settings/", "/settings/password/", "/settings/devices/logout/"):
        assert this.get(url).status_code in (200, 405)
    assert {key: r.dump(key) for key in r.scan_iter()} == before


def test_every_settings_form_needs_the_csrf_token(alice, r):
    this = device("alice", enforce_csrf_checks=True)
    other = device("alice")
    other_id = selectors.token_hash(other.cookies[COOKIE].value.split(":")[1])
    before = r.hgetall(keys.user(alice.id)), r.hgetall(keys.sessions(alice.id))
    forged = [
        ("/settings/password/", {"current_password": PASSWORD,
                                 "new_password": NEW_PASSWORD,
                                 "new_password2": NEW_PASSWORD}),
        ("/settings/devices/logout/", {"device": other_id}),
        ("/logout/everywhere/", {}),
    ]  # fmt: skip
    for url, data in forged:
        assert this.post(url, data).status_code == 403
    assert (
        r.hgetall(keys.user(alice.id)),
        r.hgetall(keys.sessions(alice.id)),
    ) == before
    token = form_token(body(this.get("/settings/")))
    response = this.post(
        "/settings/devices/logout/", {"device": other_id, "csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302 and not signed_in(other)


def test_log_out_everywhere_from_the_settings_page(alice, r):
    this, other = device("alice"), device("alice")
    page = body(this.get("/settings/"))
    assert 'action="/logout/everywhere/"' in page
    this.post("/logout/everywhere/")
    assert not signed_in(this) and not signed_in(other)
    assert not r.exists(keys.sessions(alice.id), keys.devices(alice.id))


def test_a_session_from_before_devices_were_recorded_shows_as_unknown(alice, r):
    this = device("alice", FIREFOX_LINUX)
    old = services.session_create(uid=alice.id)
    r.hdel(keys.devices(alice.id), selectors.token_hash(old.token))  # as made before
    response = this.get("/settings/")
    assert response.status_code == 200
    page = body(response)
    assert page.count('class="device"') == 2
    assert "Unknown device" in page and "Firefox on Linux" in page
    assert selectors.token_hash(old.token) in device_ids(page)


def test_settings_page_escapes_stored_device_text(alice, r):
    this = device("alice")
    this_id = selectors.token_hash(this.cookies[COOKIE].value.split(":")[1])
    r.hset(keys.devices(alice.id), this_id, '{"label":"<b>x</b>","ip":"<i>"}')
    page = body(this.get("/settings/"))
    assert "<b>x</b>" not in page and "&lt;b&gt;x&lt;/b&gt;" in page


@pytest.mark.real_redis
def test_settings_page_costs_two_round_trips(alice):
    this = device("alice", FIREFOX_LINUX)
    for _ in range(3):
        device("alice", SAFARI_IPHONE)
    this.get("/settings/")  # warm: connections open, scripts loaded
    with RoundTripCounter() as counter:
        assert this.get("/settings/").status_code == 200
    assert 1 <= counter.count <= 2, counter.count
    assert counter.most_per_node <= 1
