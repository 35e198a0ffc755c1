from __future__ import annotations

import threading
import time

import pytest
from django.contrib.auth.hashers import check_password

from accounts import keys, selectors, services
from accounts.domain import (
    InvalidCredentials,
    InvalidUsername,
    TooManyAttempts,
    UsernameTaken,
)
from tests.helpers import PASSWORD, make_user


def test_user_create_stores_user_retrievable_by_any_case():
    user = make_user("Alice")
    assert selectors.user_get_by_username(username="alice") == user
    assert selectors.user_get_by_username(username="ALICE").username == "Alice"


def test_username_unique_regardless_of_case():
    make_user("Alice")
    with pytest.raises(UsernameTaken):
        make_user("alice")
    assert selectors.user_get_by_username(username="alice").username == "Alice"


def test_failed_claim_leaves_no_orphan_user(r):
    make_user("bob")
    with pytest.raises(UsernameTaken):
        make_user("BOB")
    user_hashes = list(r.scan_iter(match=keys.user_pattern()))
    assert len(user_hashes) == 1


@pytest.mark.parametrize(
    "name", ["ab", "a" * 31, "has space", "dash-name", "émile", ""]
)
def test_invalid_usernames_refused(name):
    with pytest.raises(InvalidUsername):
        make_user(name)


@pytest.mark.parametrize(
    "name", ["admin", "ADMIN", "Login", "signup", "static", "healthz", "timeline"]
)
def test_reserved_usernames_refused_whatever_their_case(r, name):
    with pytest.raises(InvalidUsername, match="reserved"):
        make_user(name)
    assert list(r.scan_iter()) == []


def test_password_stored_only_as_django_hash(r):
    user = make_user("carol", "s3cret-Passphrase!")
    stored = r.hget(keys.user(user.id), "password")
    assert "s3cret-Passphrase!" not in stored
    assert check_password("s3cret-Passphrase!", stored)
    for key in r.scan_iter():
        if r.type(key) == "hash":
            assert "s3cret-Passphrase!" not in r.hvals(key)


def test_production_hasher_is_pbkdf2(r, settings):
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.PBKDF2PasswordHasher"]
    user = make_user("dave")
    assert r.hget(keys.user(user.id), "password").startswith("pbkdf2_sha256$")


def test_login_any_case_returns_fresh_token_per_device():
    make_user("Erin")
    user1, creds1 = services.session_login(
        username="erin", password=PASSWORD, client="1.2.3.4"
    )
    user2, creds2 = services.session_login(
        username="ERIN", password=PASSWORD, client="1.2.3.4"
    )
    assert user1.username == user2.username == "Erin"
    assert creds1.token != creds2.token
    assert len(creds1.token) >= 22  # at least 128 bits of url-safe base64
    assert selectors.PageReads(creds1).viewer.value.username == "Erin"
    assert selectors.PageReads(creds2).viewer.value.username == "Erin"


def test_token_stored_only_hashed(r):
    user = make_user("frank")
    creds = services.session_create(uid=user.id)
    fields = r.hkeys(keys.sessions(user.id))
    assert creds.token not in fields
    assert fields == [selectors.token_hash(creds.token)]
    assert 0 < r.ttl(keys.sessions(user.id)) <= 30 * 86400


def test_wrong_password_and_unknown_user_raise_the_same_error():
    make_user("gina")
    with pytest.raises(InvalidCredentials):
        services.session_login(username="gina", password="nope", client="1.1.1.1")
    with pytest.raises(InvalidCredentials):
        services.session_login(username="nobody", password="nope", client="1.1.1.2")


def test_revoke_logs_out_only_that_device():
    user = make_user("hank")
    creds1 = services.session_create(uid=user.id)
    creds2 = services.session_create(uid=user.id)
    services.session_revoke(credentials=creds1)
    assert not selectors.PageReads(creds1).viewer.value.is_authenticated
    assert selectors.PageReads(creds2).viewer.value.is_authenticated


def test_revoke_all_logs_out_every_device():
    user = make_user("ivy")
    all_creds = [services.session_create(uid=user.id) for _ in range(3)]
    services.session_revoke_all(uid=user.id)
    assert not any(
        selectors.PageReads(c).viewer.value.is_authenticated for c in all_creds
    )


def test_expired_token_is_refused_and_pruned(r, settings):
    user = make_user("jack")
    creds = services.session_create(uid=user.id)
    r.hset(
        keys.sessions(user.id), selectors.token_hash(creds.token), int(time.time()) - 1
    )
    assert not selectors.PageReads(creds).viewer.value.is_authenticated
    services.session_create(uid=user.id)
    assert selectors.token_hash(creds.token) not in r.hkeys(keys.sessions(user.id))


def test_sessions_capped_at_max_devices(r, settings):
    settings.AUTH_MAX_DEVICES = 3
    user = make_user("kim")
    all_creds = [services.session_create(uid=user.id) for _ in range(5)]
    assert r.hlen(keys.sessions(user.id)) == 3
    assert selectors.PageReads(all_creds[-1]).viewer.value.is_authenticated


def test_failed_logins_for_a_name_are_limited(settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    make_user("leo")
    for i in range(3):
        with pytest.raises(InvalidCredentials):
            services.session_login(username="leo", password="bad", client=f"10.0.0.{i}")
    with pytest.raises(TooManyAttempts) as excinfo:
        services.session_login(username="LEO", password=PASSWORD, client="10.0.0.9")
    assert 0 < excinfo.value.retry_after <= settings.LOGIN_FAILURE_WINDOW_SECONDS


def test_failed_logins_from_a_client_are_limited(settings):
    settings.LOGIN_FAILURE_LIMIT = 3
    make_user("mia")
    for name in ("x_one", "x_two", "x_three"):
        with pytest.raises(InvalidCredentials):
            services.session_login(username=name, password="bad", client="9.9.9.9")
    with pytest.raises(TooManyAttempts):
        services.session_login(username="mia", password=PASSWORD, client="9.9.9.9")
    # Another client can still log in as mia.
    user, _ = services.session_login(
        username="mia", password=PASSWORD, client="8.8.8.8"
    )
    assert user.username == "mia"


def test_failure_counters_expire(r, settings):
    make_user("ned")
    with pytest.raises(InvalidCredentials):
        services.session_login(username="ned", password="bad", client="7.7.7.7")
    for key in (keys.login_failures_user("ned"), keys.login_failures_client("7.7.7.7")):
        assert 0 < r.ttl(key) <= settings.LOGIN_FAILURE_WINDOW_SECONDS


@pytest.mark.real_redis
def test_concurrent_signups_of_one_name_create_exactly_one_account(r):
    barrier = threading.Barrier(16)
    outcomes: list[str] = []

    def attempt(i: int) -> None:
        barrier.wait()
        try:
            services.user_create(
                username="Racer" if i % 2 else "racer", password=PASSWORD
            )
            outcomes.append("created")
        except UsernameTaken:
            outcomes.append("taken")

    threads = [threading.Thread(target=attempt, args=(i,)) for i in range(16)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("created") == 1
    assert outcomes.count("taken") == 15
    assert len(list(r.scan_iter(match=keys.user_pattern()))) == 1
    assert selectors.user_get_by_username(username="racer") is not None
