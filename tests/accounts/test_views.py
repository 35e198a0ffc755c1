from __future__ import annotations

import pytest
import redis
from django.conf import settings
from django.test import Client

from accounts import domain, keys, services
from config.redis import set_redis
from tests.helpers import PASSWORD, logged_in_client, make_user

COOKIE = settings.AUTH_COOKIE_NAME


def signup(client: Client, username: str, password: str = PASSWORD, password2=None):
    return client.post(
        "/signup/",
        {
            "username": username,
            "password": password,
            "password2": password2 or password,
        },
    )


def test_visitor_sees_welcome_with_login_and_signup_links():
    body = Client().get("/").content.decode()
    assert 'href="/login/"' in body and 'href="/signup/"' in body
    assert 'action="/logout/"' not in body


def test_signup_logs_in_and_redirects_home():
    client = Client()
    response = signup(client, "Alice")
    assert response.status_code == 302 and response["Location"] == "/"
    cookie = response.cookies[COOKIE]
    assert cookie["httponly"] and cookie["samesite"] == "Lax"
    home = client.get("/").content.decode()
    assert 'action="/logout/"' in home
    assert 'href="/u/Alice/"' in home


def test_signup_cookie_secure_when_not_debug(settings):
    settings.AUTH_COOKIE_SECURE = True
    response = signup(Client(), "secure_sam")
    assert response.cookies[COOKIE]["secure"]


def test_signup_shows_field_errors_and_stores_nothing(r):
    client = Client()
    response = signup(client, "no spaces!", "short", "other")
    assert response.status_code == 400
    body = response.content.decode()
    assert (
        "Use 3 to 30 letters (a-z or A-Z, without accents), digits or underscores."
        in body
    )
    assert "The two passwords differ." in body
    assert list(r.scan_iter()) == []
    # `ñ` is a letter to whoever types it: the rule says which letters it means
    # (found by exploratory testing: "letters" refused `ñandu`).
    accented = signup(client, "ñandu_x", "a long passphrase 1", "a long passphrase 1")
    assert accented.status_code == 400
    assert "(a-z or A-Z, without accents)" in accented.content.decode()


@pytest.mark.parametrize("name", ["admin", "Settings", "API", "notifications"])
def test_signup_refuses_reserved_names_with_a_clear_error(r, name):
    response = signup(Client(), name)
    assert response.status_code == 400
    body = response.content.decode()
    assert "That username is reserved." in body
    assert f'value="{name}"' in body  # what was typed is kept
    assert list(r.scan_iter()) == []


def test_existing_account_with_a_now_reserved_name_still_works(monkeypatch):
    # Made before the name was reserved (the rule's list was shorter then).
    monkeypatch.setattr(domain, "RESERVED_USERNAMES", frozenset())
    make_user("Help")
    monkeypatch.undo()
    client = logged_in_client("help")
    assert 'href="/u/Help/"' in client.get("/").content.decode()
    profile = Client().get("/u/help/")
    assert profile.status_code == 200 and "@Help" in profile.content.decode()


def test_signup_runs_django_password_validators():
    response = signup(Client(), "weakling", "12345678")
    assert response.status_code == 400
    body = response.content.decode()
    assert "This password is too common." in body or "entirely numeric" in body


def test_signup_password_like_the_username_is_refused_not_a_500(r):
    # Found by the property tests: Django's similarity check asked for a model field.
    response = Client(raise_request_exception=False).post(
        "/signup/",
        {
            "username": "sunflower77",
            "password": "sunflower77",
            "password2": "sunflower77",
        },
    )
    assert response.status_code == 400
    assert "too similar to the username" in response.content.decode()
    assert list(r.scan_iter()) == []


def test_signup_taken_name_any_case():
    make_user("Bob")
    response = signup(Client(), "bob")
    assert response.status_code == 400
    assert "That username is taken." in response.content.decode()


def test_signup_escapes_user_text():
    response = signup(Client(), "<script>x</script>")
    assert "<script>x</script>" not in response.content.decode()
    assert "&lt;script&gt;" in response.content.decode()


def test_login_page_then_home_shows_user():
    make_user("Carol")
    client = logged_in_client("CAROL")
    assert 'href="/u/Carol/"' in client.get("/").content.decode()


def test_login_wrong_password_and_unknown_user_same_message():
    make_user("dan")
    wrong = Client().post("/login/", {"username": "dan", "password": "nope"})
    unknown = Client().post("/login/", {"username": "nobody", "password": "nope"})
    for response in (wrong, unknown):
        assert response.status_code == 400
        assert "Wrong username or password." in response.content.decode()
        assert COOKIE not in response.cookies


def test_login_redirects_to_safe_next_only():
    make_user("eve")
    ok = Client().post(
        "/login/?next=/timeline/", {"username": "eve", "password": PASSWORD}
    )
    assert ok["Location"] == "/timeline/"
    evil = Client().post(
        "/login/?next=https://evil.example/", {"username": "eve", "password": PASSWORD}
    )
    assert evil["Location"] == "/"


def test_login_on_second_device_keeps_first():
    make_user("fay")
    first = logged_in_client("fay")
    second = logged_in_client("fay")
    assert 'action="/logout/"' in first.get("/").content.decode()
    assert 'action="/logout/"' in second.get("/").content.decode()


def test_logout_revokes_token_even_for_a_copied_cookie():
    make_user("gus")
    client = logged_in_client("gus")
    stolen = client.cookies[COOKIE].value
    response = client.post("/logout/")
    assert response.status_code == 302
    assert response.cookies[COOKIE].value == ""
    replay = Client()
    replay.cookies[COOKIE] = stolen
    body = replay.get("/").content.decode()
    assert 'action="/logout/"' not in body and 'href="/login/"' in body


def test_logout_requires_post():
    make_user("hal")
    client = logged_in_client("hal")
    assert client.get("/logout/").status_code == 405
    assert 'action="/logout/"' in client.get("/").content.decode()


def test_logout_everywhere_revokes_all_devices(r):
    user = make_user("ida")
    devices = [logged_in_client("ida") for _ in range(3)]
    devices[0].post("/logout/everywhere/")
    for device in devices:
        assert 'action="/logout/"' not in device.get("/").content.decode()
    assert not r.exists(keys.sessions(user.id))


def test_stale_cookie_is_cleared():
    client = Client()
    client.cookies[COOKIE] = "12:" + "A" * 43
    response = client.get("/")
    assert response.status_code == 200
    assert response.cookies[COOKIE].value == ""


def test_malformed_cookie_is_ignored_and_cleared():
    client = Client()
    client.cookies[COOKIE] = "user:{1}*garbage"
    response = client.get("/")
    assert response.status_code == 200
    assert response.cookies[COOKIE].value == ""


def test_authenticated_pages_are_not_cached():
    make_user("jon")
    response = logged_in_client("jon").get("/")
    assert "no-store" in response["Cache-Control"]
    assert "Cookie" in response["Vary"]


def test_brute_force_limit_shows_clear_message(settings):
    settings.RATE_LIMIT_LOGIN_PAIR = "3/5m"
    make_user("kay")
    for _ in range(3):
        Client().post("/login/", {"username": "kay", "password": "bad"})
    response = Client().post("/login/", {"username": "kay", "password": PASSWORD})
    assert response.status_code == 429
    # 3 per 5 minutes: one more attempt every 100 s.
    assert (
        "Too many failed attempts. Try again in 2 minutes." in response.content.decode()
    )
    assert 99 <= int(response["Retry-After"]) <= 100
    assert 'value="kay"' in response.content.decode()
    assert COOKIE not in response.cookies


def test_csrf_refused_without_token(r):
    client = Client(enforce_csrf_checks=True)
    response = client.post(
        "/signup/",
        {"username": "mallory", "password": PASSWORD, "password2": PASSWORD},
    )
    assert response.status_code == 403
    assert "This form has expired" in response.content.decode()
    assert list(r.scan_iter()) == []


def test_csrf_accepted_with_token_from_form():
    client = Client(enforce_csrf_checks=True)
    client.get("/signup/")
    token = client.cookies["csrftoken"].value
    response = client.post(
        "/signup/",
        {
            "username": "honest",
            "password": PASSWORD,
            "password2": PASSWORD,
            "csrfmiddlewaretoken": token,
        },
    )
    assert response.status_code == 302


def test_logout_refused_without_csrf_token():
    make_user("lou")
    client = logged_in_client("lou", enforce_csrf_checks=True)
    assert client.post("/logout/").status_code == 403
    assert 'action="/logout/"' in client.get("/").content.decode()


def _redis_down() -> None:
    set_redis(
        redis.Redis.from_url(
            "unix:///nonexistent/redis.sock",
            socket_connect_timeout=0.2,
            decode_responses=True,
        )
    )


def test_redis_outage_gives_503_page_for_visitor():
    _redis_down()
    response = Client().post(
        "/signup/", {"username": "zed", "password": PASSWORD, "password2": PASSWORD}
    )
    assert response.status_code == 503
    assert "Temporarily unavailable" in response.content.decode()
    assert response["Retry-After"] == "30"


def test_redis_outage_gives_503_page_for_logged_in_user(redis_client):
    make_user("yan")
    client = logged_in_client("yan")
    _redis_down()
    response = client.get("/")
    assert response.status_code == 503
    assert "Temporarily unavailable" in response.content.decode()
    set_redis(redis_client)
    assert 'action="/logout/"' in client.get("/").content.decode()


def test_login_required_sends_visitors_to_login_and_back():
    make_user("max")
    response = Client().post("/logout/everywhere/")
    assert response["Location"] == "/login/?next=%2F"
    client = Client()
    login = client.post(
        "/login/?next=/u/max/", {"username": "max", "password": PASSWORD}
    )
    assert login["Location"] == "/u/max/"


def test_signup_refuses_a_password_like_the_username():
    response = signup(Client(), "quentin_tarantula", "quentin_tarantula")
    assert response.status_code == 400
    assert "The password is too similar to the username." in response.content.decode()


def test_a_login_with_the_old_password_racing_a_password_change_is_logged_out(
    monkeypatch,
):
    """The owner changes a leaked password while the thief's login (with the old
    one) is being checked: the thief gets "Wrong username or password", not a
    session that outlives the change."""
    make_user("victim")
    owner = logged_in_client("victim")
    new_password = "a-brand-new-passphrase-77"
    real_check = services.check_password
    changed = []

    def check_then_owner_changes_password(password, encoded):
        ok = real_check(password, encoded)
        if not changed:  # the change checks the password too: once only
            changed.append(True)
            response = owner.post(
                "/settings/password/",
                {
                    "current_password": PASSWORD,
                    "new_password": new_password,
                    "new_password2": new_password,
                },
            )
            assert response.status_code == 302, response.content
        return ok

    monkeypatch.setattr(services, "check_password", check_then_owner_changes_password)
    thief = Client()
    response = thief.post("/login/", {"username": "victim", "password": PASSWORD})
    assert changed
    assert response.status_code == 400
    assert "Wrong username or password." in response.content.decode()
    assert COOKIE not in response.cookies
    assert 'action="/logout/"' not in thief.get("/").content.decode()
    assert 'action="/logout/"' in owner.get("/").content.decode()
