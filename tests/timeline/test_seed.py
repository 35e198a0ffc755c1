from __future__ import annotations

import io

import pytest
from django.core.management import CommandError, call_command

from accounts import keys as account_keys
from accounts import services as account_services
from tests.helpers import make_user
from timeline import keys
from timeline.management.commands.seed import DEMO_PASSWORD


def run_seed(*args: str) -> str:
    out = io.StringIO()
    call_command("seed", "--quiet", *args, stdout=out)
    return out.getvalue()


def test_seed_creates_users_follows_statuses_and_homes(r):
    output = run_seed(
        "--users", "60", "--follows-per-user", "5", "--statuses-per-user", "3"
    )
    assert "Seeded 60 users" in output and "180 statuses" in output
    uids = range(1, 61)
    assert sum(r.zcard(keys.following(u)) for u in uids) == sum(
        r.zcard(keys.followers(u)) for u in uids
    )
    assert sum(r.zcard(keys.posts(u)) for u in uids) == 180
    # Home timelines hold exactly what fan-out would have put there.
    for uid in uids:
        authors = {uid, *(int(f) for f in r.zrange(keys.following(uid), 0, -1))}
        expected = sorted(
            (int(s) for a in authors for s in r.zrange(keys.posts(a), 0, -1)),
            reverse=True,
        )
        home = [int(s) for s in r.zrevrange(keys.home(uid), 0, -1)]
        assert home == expected[:1000]


def test_seeded_users_log_in_with_documented_password():
    run_seed("--users", "5")
    user, credentials = account_services.session_login(
        username="user3", password=DEMO_PASSWORD, client="127.0.0.1"
    )
    assert user.username == "user3" and credentials.token


def test_seed_follow_graph_is_power_law(r):
    run_seed("--users", "400", "--follows-per-user", "10", "--statuses-per-user", "0")
    sizes = sorted((r.zcard(keys.followers(u)) for u in range(1, 401)), reverse=True)
    median = sizes[len(sizes) // 2]
    assert sizes[0] > 10 * max(median, 1)


def test_seed_refuses_a_non_empty_store_without_append(r):
    make_user("existing")
    with pytest.raises(CommandError, match="--append"):
        run_seed("--users", "5")
    output = run_seed("--users", "5", "--append")
    assert "Seeded 5 users" in output
    assert r.get(account_keys.username("existing")) is not None


def test_append_never_steals_a_taken_name(r):
    make_user("user2")  # a person took a name the seeder would pick
    run_seed("--users", "3", "--append")
    assert r.get(account_keys.username("user2")) == "1"
    assert len(list(r.scan_iter(match="username:*"))) == 4


def test_flush_without_yes_needs_a_terminal(r):
    make_user("keepme")
    with pytest.raises(CommandError, match="--yes"):
        run_seed("--users", "5", "--flush")
    assert r.get(account_keys.username("keepme")) is not None
    run_seed("--users", "5", "--flush", "--yes")
    assert r.get(account_keys.username("keepme")) is None
