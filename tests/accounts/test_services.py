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
from timeline import services as timeline_services


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
    "name",
    ["ab", "a" * 31, "has space", "dash-name", "émile", "", "bob\n", "\u212aate"],
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


def test_a_strangers_failed_logins_do_not_lock_the_owner_out(settings):
    settings.RATE_LIMIT_LOGIN_PAIR = "3/5m"
    make_user("leo")
    for _ in range(3):
        with pytest.raises(InvalidCredentials):
            services.session_login(username="leo", password="bad", client="10.0.0.1")
    # The stranger's pair is spent, even with the right password...
    with pytest.raises(TooManyAttempts) as excinfo:
        services.session_login(username="LEO", password=PASSWORD, client="10.0.0.1")
    assert 0 < excinfo.value.retry_after <= 300
    # ...but the owner, from their own address, logs in at once.
    user, _ = services.session_login(
        username="leo", password=PASSWORD, client="10.0.0.9"
    )
    assert user.username == "leo"


def test_failed_logins_from_a_client_are_limited(settings):
    settings.RATE_LIMIT_LOGIN_CLIENT = "3/5m"
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


def test_successful_logins_spend_no_budget(settings):
    settings.RATE_LIMIT_LOGIN_PAIR = "3/5m"
    settings.RATE_LIMIT_LOGIN_CLIENT = "3/5m"
    make_user("ola")
    for _ in range(10):
        services.session_login(username="ola", password=PASSWORD, client="7.7.7.7")


def test_failure_budgets_expire(r, settings):
    make_user("ned")
    with pytest.raises(InvalidCredentials):
        services.session_login(username="ned", password="bad", client="7.7.7.7")
    ttls = [r.pttl(key) for key in r.scan_iter("limit:*")]
    # One key per rate of the pair (10/5m) and of the client (30/5m, 300/1d), each
    # gone once its budget is whole again: 30 s, 10 s and 288 s after one failure.
    assert len(ttls) == 3
    assert all(0 < ttl <= 288_000 for ttl in ttls)


@pytest.mark.real_redis
def test_parallel_guesses_cannot_pass_the_limit(settings):
    settings.RATE_LIMIT_LOGIN_PAIR = "10/5m"
    make_user("pat")
    barrier = threading.Barrier(30)
    outcomes: list[str] = []

    def guess(i: int) -> None:
        barrier.wait()
        try:
            services.session_login(username="pat", password=f"bad{i}", client="6.6.6.6")
        except InvalidCredentials:
            outcomes.append("checked")
        except TooManyAttempts:
            outcomes.append("refused")

    threads = [threading.Thread(target=guess, args=(i,)) for i in range(30)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(outcomes) == ["checked"] * 10 + ["refused"] * 20


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


def device_fields(r, uid: int) -> tuple[set[str], set[str]]:
    return set(r.hkeys(keys.sessions(uid))), set(r.hkeys(keys.devices(uid)))


def test_a_session_records_its_device_beside_it(r):
    user = make_user("devon")
    creds = services.session_create(
        uid=user.id, user_agent="Mozilla/5.0 (X11; Linux) Firefox/128.0", client="::1"
    )
    sessions, devices = device_fields(r, user.id)
    assert sessions == devices == {selectors.token_hash(creds.token)}
    metadata = r.hget(keys.devices(user.id), selectors.token_hash(creds.token))
    assert "Firefox on Linux" in metadata and "::1" in metadata
    assert creds.token not in metadata
    assert 0 < r.ttl(keys.devices(user.id)) <= r.ttl(keys.sessions(user.id))


def test_device_metadata_pruned_with_its_session_at_the_cap(r, settings):
    settings.AUTH_MAX_DEVICES = 2
    user = make_user("capped")
    for _ in range(4):
        services.session_create(uid=user.id)
    sessions, devices = device_fields(r, user.id)
    assert len(sessions) == 2 and sessions == devices


def test_expired_session_loses_its_metadata_at_the_next_sign_in(r):
    user = make_user("expiring")
    old = services.session_create(uid=user.id)
    r.hset(keys.sessions(user.id), selectors.token_hash(old.token), 1)
    services.session_create(uid=user.id)
    sessions, devices = device_fields(r, user.id)
    assert len(sessions) == 1 and sessions == devices


def test_revoking_a_device_deletes_its_metadata(r):
    user = make_user("revoker")
    first = services.session_create(uid=user.id)
    second = services.session_create(uid=user.id)
    services.session_revoke(credentials=first)
    assert device_fields(r, user.id) == ({selectors.token_hash(second.token)},) * 2
    services.session_revoke_all(uid=user.id)
    assert not r.exists(keys.sessions(user.id), keys.devices(user.id))


def test_revoking_a_malformed_device_id_touches_nothing(r):
    user = make_user("careful")
    services.session_create(uid=user.id)
    before = device_fields(r, user.id)
    for bad in ("", "*", "a" * 63, "A" * 64, "g" * 64, "a" * 65, "a" * 64 + "\n"):
        assert not services.session_revoke_device(uid=user.id, device_id=bad)
    assert device_fields(r, user.id) == before


def change_password(creds, current=PASSWORD, new="a-brand-new-passphrase"):
    return services.password_change(
        credentials=creds,
        username="changer",
        current_password=current,
        new_password=new,
        user_agent="",
        client="127.0.0.1",
    )


def test_password_change_keeps_only_a_fresh_session_for_this_device(r):
    user = make_user("changer")
    this = services.session_create(uid=user.id)
    other = services.session_create(uid=user.id)
    fresh = change_password(this)
    assert check_password(
        "a-brand-new-passphrase", r.hget(keys.user(user.id), "password")
    )
    viewer = selectors.PageReads
    assert viewer(fresh).viewer.value.is_authenticated
    for old in (this, other):
        assert not viewer(old).viewer.value.is_authenticated
    assert device_fields(r, user.id) == ({selectors.token_hash(fresh.token)},) * 2


def test_password_change_with_a_wrong_password_changes_nothing(r):
    user = make_user("changer")
    this = services.session_create(uid=user.id)
    before = r.hgetall(keys.user(user.id)), device_fields(r, user.id)
    with pytest.raises(InvalidCredentials):
        change_password(this, current="not-it")
    assert (r.hgetall(keys.user(user.id)), device_fields(r, user.id)) == before
    # Counted as a failed login: the pair's and the client's budgets hold one less.
    assert any("{n:changer:" in key for key in r.scan_iter("limit:login:*"))


def test_password_change_refused_when_the_password_changed_meanwhile(r, monkeypatch):
    user = make_user("changer")
    this = services.session_create(uid=user.id)
    real_check = services.check_password

    def check_then_someone_else_changes_it(password, encoded):
        ok = real_check(password, encoded)
        r.hset(keys.user(user.id), "password", "changed-meanwhile")
        return ok

    monkeypatch.setattr(services, "check_password", check_then_someone_else_changes_it)
    with pytest.raises(InvalidCredentials):
        change_password(this)
    assert r.hget(keys.user(user.id), "password") == "changed-meanwhile"
    assert selectors.PageReads(this).viewer.value.is_authenticated


def test_a_login_racing_a_password_change_starts_no_session(r, monkeypatch):
    """The owner changes the password while a login with the old one is checked:
    the login is refused, and only the owner's fresh session exists."""
    user = make_user("changer")
    owner = services.session_create(uid=user.id)
    real_check = services.check_password
    changed = []

    def check_then_the_owner_changes_it(password, encoded):
        ok = real_check(password, encoded)
        if not changed:  # the change checks the password too: once only
            changed.append(None)
            changed[0] = change_password(owner)
        return ok

    monkeypatch.setattr(services, "check_password", check_then_the_owner_changes_it)
    with pytest.raises(InvalidCredentials):
        services.session_login(username="changer", password=PASSWORD, client="1.2.3.4")
    assert r.hkeys(keys.sessions(user.id)) == [selectors.token_hash(changed[0].token)]
    assert r.hkeys(keys.devices(user.id)) == r.hkeys(keys.sessions(user.id))


def test_a_login_racing_the_accounts_deletion_leaves_no_session_behind(r, monkeypatch):
    """A login checked while the account is deleted is refused and writes no
    session or device onto the deleted account (its job would not find them)."""
    user = make_user("leaving")
    real_check = services.check_password

    def check_then_the_account_goes(password, encoded):
        ok = real_check(password, encoded)
        timeline_services.account_close(user=user)
        return ok

    monkeypatch.setattr(services, "check_password", check_then_the_account_goes)
    with pytest.raises(InvalidCredentials):
        services.session_login(username="leaving", password=PASSWORD, client="1.2.3.4")
    assert not r.exists(keys.sessions(user.id), keys.devices(user.id))
