"""Deleting an account: after the password, the person is gone from every page at
once, and everything of theirs from the store once the account job has run; their
name stays taken for its grace period, then anyone may claim it."""

from __future__ import annotations

import io

import pytest
from django.conf import settings
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from accounts import keys as account_keys
from accounts.selectors import user_get
from config.redis import get_redis_bytes
from tests.helpers import (
    PASSWORD,
    logged_in_client,
    make_user,
    run_jobs,
    store_snapshot,
)
from timeline import jobs, keys, services
from timeline.domain import InvalidStatus

COOKIE = settings.AUTH_COOKIE_NAME


def delete_account(client: Client, password: str = PASSWORD):
    return client.post("/settings/delete/", {"password": password})


def owned_keys(r, uid: int) -> list[str]:
    """Every key of the store tagged with the user's id (tests may SCAN)."""
    return sorted(k for k in r.scan_iter() if f"{{{uid}}}" in k)


def timelines_check() -> tuple[str, bool]:
    out = io.StringIO()
    try:
        call_command("timelines", "check", stdout=out, stderr=io.StringIO())
    except CommandError as error:
        return out.getvalue() + str(error), True
    return out.getvalue(), False


@pytest.fixture
def world():
    """alice (to be deleted) follows carol; bob and carol follow alice; everyone
    has posted and every home is filled."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=alice, followee_id=carol.id)
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=carol, followee_id=alice.id)
    mine = [
        services.status_create(author=alice, text=f"alice {i}").id for i in range(3)
    ]
    theirs = services.status_create(author=carol, text="carol speaks").id
    run_jobs()
    return alice, bob, carol, mine, theirs


def test_deleting_removes_the_account_from_every_page_and_the_store(r, world):
    alice, bob, carol, mine, theirs = world
    alice_client = logged_in_client("alice")
    phone = logged_in_client("alice")
    assert str(mine[0]) in r.zrange(keys.home(bob.id), 0, -1)

    answer = delete_account(alice_client)
    assert answer.status_code == 302 and answer["Location"] == "/"
    assert answer.cookies[COOKIE].value == ""
    # At once, before any job ran: no profile, no login, every device logged out.
    assert Client().get("/u/alice/").status_code == 404
    assert Client().get("/u/alice/followers/").status_code == 404
    assert "alice" not in Client().get("/u/bob/following/").content.decode()
    assert 'action="/logout/"' not in phone.get("/").content.decode()
    refused = Client().post("/login/", {"username": "alice", "password": PASSWORD})
    assert refused.status_code == 400

    run_jobs()
    for sid in mine:
        assert Client().get(f"/s/{sid}/").status_code == 404
    bob_home = logged_in_client("bob").get("/").content.decode()
    assert "alice 0" not in bob_home
    assert not set(map(str, mine)) & set(r.zrange(keys.home(bob.id), 0, -1))
    assert not set(map(str, mine)) & set(r.zrange(keys.home(carol.id), 0, -1))
    everyone = Client().get("/timeline/").content.decode()
    assert "alice 0" not in everyone and "carol speaks" in everyone
    bob_page = Client().get("/u/bob/").content.decode()
    assert "<strong>0</strong> following" in bob_page
    carol_page = Client().get("/u/carol/").content.decode()
    assert "<strong>0</strong> followers" in carol_page
    assert "<strong>0</strong> following" in carol_page
    assert r.zrange(keys.followers(carol.id), 0, -1) == []
    assert r.hgetall(keys.follower_names(carol.id)) == {}
    assert r.zscore(keys.popular_users(), alice.id) is None
    assert owned_keys(r, alice.id) == []
    assert jobs.stats().depth == 0
    for sid in mine:
        assert not r.exists(keys.status(sid))
    assert Client().get("/u/alice/").status_code == 404
    output, failed = timelines_check()
    assert not failed, output


def test_the_name_stays_taken_for_its_grace_period_then_is_free(r, world):
    delete_account(logged_in_client("alice"))
    run_jobs()
    taken = Client().post(
        "/signup/", {"username": "Alice", "password": PASSWORD, "password2": PASSWORD}
    )
    assert taken.status_code == 400
    assert "That username is taken." in taken.content.decode()
    claim = account_keys.username("alice")
    grace = settings.ACCOUNT_NAME_GRACE_DAYS * 86400
    assert grace - 60 < r.ttl(claim) <= grace
    r.delete(claim)  # as its TTL ends
    again = Client().post(
        "/signup/", {"username": "alice", "password": PASSWORD, "password2": PASSWORD}
    )
    assert again.status_code == 302
    page = Client().get("/u/alice/").content.decode()
    assert "<strong>0</strong> statuses" in page and "alice 0" not in page


def test_the_name_is_no_one_during_its_grace_period(r, world):
    alice = world[0]
    delete_account(logged_in_client("alice"))
    assert r.get(account_keys.username("alice")) != str(alice.id)
    assert Client().get("/u/alice/").status_code == 404
    assert logged_in_client("bob").post("/u/alice/follow/").status_code == 404
    refused = Client().post("/login/", {"username": "alice", "password": PASSWORD})
    assert refused.status_code == 400


def test_a_wrong_password_refuses_counts_as_a_failed_login_and_changes_nothing(
    r, world
):
    client = logged_in_client("alice")
    before = store_snapshot(r)
    answer = delete_account(client, password="not-my-password")
    assert answer.status_code == 400
    assert "Wrong password." in answer.content.decode()
    # Counted as a failed login: the name-and-client pair's budget holds one less.
    assert any("{n:alice:" in key for key in r.scan_iter("limit:login:*"))
    assert store_snapshot(r) == before
    assert Client().get("/u/alice/").status_code == 200
    assert 'action="/logout/"' in client.get("/").content.decode()


def test_too_many_wrong_passwords_pause_the_page(r, world, settings):
    settings.RATE_LIMIT_LOGIN_PAIR = "2/5m"
    client = logged_in_client("alice")
    for _ in range(2):
        assert delete_account(client, password="nope").status_code == 400
    answer = delete_account(client)  # even the right one, for now
    assert answer.status_code == 429 and "Retry-After" in answer
    assert Client().get("/u/alice/").status_code == 200


def test_the_page_explains_and_a_get_changes_nothing(r, world):
    client = logged_in_client("alice")
    client.get("/")  # today's last-seen stamp, the one write a page makes
    before = store_snapshot(r)
    page = client.get("/settings/delete/")
    assert page.status_code == 200
    body = page.content.decode()
    assert "cannot be undone" in body and 'name="password"' in body
    assert f"{settings.ACCOUNT_NAME_GRACE_DAYS} days" in body
    assert store_snapshot(r) == before
    assert 'href="/settings/delete/"' in client.get("/settings/").content.decode()


def test_a_visitor_is_sent_to_log_in(r, world):
    answer = Client().get("/settings/delete/")
    assert answer.status_code == 302 and answer["Location"].startswith("/login/")
    answer = Client().post("/settings/delete/", {"password": PASSWORD})
    assert answer.status_code == 302
    assert Client().get("/u/alice/").status_code == 200


def test_csrf_is_required(r, world):
    client = logged_in_client("alice", enforce_csrf_checks=True)
    assert delete_account(client).status_code == 403
    assert Client().get("/u/alice/").status_code == 200


def test_a_follow_racing_the_deletion_leaves_nothing_behind(r, world):
    alice, bob, carol, mine, _ = world
    dave = make_user("dave")
    # dave's request read alice's id before she deleted her account...
    services.account_close(user=alice)
    # ...and follows her after: refused on her side, so his side ends too.
    assert services.follow_create(follower=dave, followee_id=alice.id) is False
    assert r.zscore(keys.following(dave.id), alice.id) is None
    assert r.zscore(keys.followers(alice.id), dave.id) is None
    assert not set(map(str, mine)) & set(r.zrange(keys.home(dave.id), 0, -1))
    run_jobs()
    assert owned_keys(r, alice.id) == []
    assert r.zrange(keys.following(dave.id), 0, -1) == []


def test_a_follow_made_just_before_the_deletion_is_ended_by_its_job(r, world):
    alice = world[0]
    dave = make_user("dave")
    services.follow_create(follower=dave, followee_id=alice.id)
    services.account_close(user=alice)
    run_jobs()
    assert r.zrange(keys.following(dave.id), 0, -1) == []
    assert owned_keys(r, alice.id) == []


def test_a_deleted_account_posts_and_follows_nothing_more(r, world):
    alice, bob, carol, mine, _ = world
    erin = make_user("erin")
    services.account_close(user=alice)
    # Requests that proved alice before her deletion and write after it.
    with pytest.raises(InvalidStatus):
        services.status_create(author=alice, text="too late")
    assert services.follow_create(follower=alice, followee_id=erin.id) is False
    assert r.zrange(keys.followers(erin.id), 0, -1) == []
    run_jobs()
    assert owned_keys(r, alice.id) == []
    assert "too late" not in Client().get("/timeline/").content.decode()
    assert not any(
        k.startswith("status:") and "too late" in str(r.hgetall(k))
        for k in r.scan_iter(match="status:*")
    )


def test_a_second_run_of_the_job_finds_nothing_to_do(r, world):
    alice = world[0]
    statuses = r.zcard(keys.posts(alice.id))
    services.account_close(user=alice)
    # The account job and each status's unlink job (timeline.social).
    assert run_jobs() == 1 + statuses
    before = store_snapshot(r)
    assert services.account_close(user=alice) is False
    slot = keys.slot_of_user(alice.id)
    r.zadd(keys.job_queue(slot), {services.account_job_id(alice.id): jobs.now_ms()})
    assert run_jobs(sweep=True) == 1
    assert store_snapshot(r) == before


def test_their_pending_fan_out_is_cancelled(r, world):
    alice, bob = world[0], world[1]
    late = services.status_create(author=alice, text="not fanned out yet")
    services.account_close(user=alice)
    run_jobs()
    assert r.zscore(keys.home(bob.id), late.id) is None
    assert not any(r.zscore(p, late.id) for p in keys.global_partitions())
    assert jobs.stats().depth == 0


def test_check_is_quiet_while_the_job_is_pending_and_reports_it_once_failed(
    r, world, monkeypatch, settings
):
    from timeline import fanout

    alice = world[0]
    services.account_close(user=alice)
    # Half done: the statuses are gone, the follows not yet.
    job = jobs.claim(slot=keys.slot_of_user(alice.id), limit=1)[0]
    monkeypatch.setattr(
        fanout, "_walk", _stop_after_statuses(fanout._walk), raising=True
    )
    assert not fanout.job_run(job)
    monkeypatch.undo()
    output, failed = timelines_check()
    assert not failed, output

    def broken(job):
        raise RuntimeError("the disk is on fire")

    monkeypatch.setitem(fanout.HANDLERS, "account", broken)
    later = jobs.now_ms()
    for _ in range(settings.JOB_MAX_ATTEMPTS + 1):
        later += (settings.JOB_RETRY_MAX_SECONDS + 1) * 1000
        run_jobs(now=later, sweep=True)
    output, failed = timelines_check()
    assert failed
    assert f"Failed jobs: 1 (e.g. account:{alice.id})" in output
    assert "Unfinished account deletions: 1" in output
    monkeypatch.undo()
    out = io.StringIO()
    call_command("timelines", "repair", stdout=out, stderr=io.StringIO())
    assert owned_keys(r, alice.id) == []
    output, failed = timelines_check()
    assert not failed, output


def test_check_reports_and_repair_finishes_a_deletion_whose_job_was_lost(r, world):
    alice = world[0]
    services.account_close(user=alice)
    slot = keys.slot_of_user(alice.id)
    r.zrem(keys.job_queue(slot), services.account_job_id(alice.id))  # lost
    output, failed = timelines_check()
    assert failed and "Unfinished account deletions: 1" in output, output
    call_command("timelines", "repair", stdout=io.StringIO(), stderr=io.StringIO())
    assert owned_keys(r, alice.id) == []
    output, failed = timelines_check()
    assert not failed, output


def _stop_after_statuses(walk):
    """A `_walk` that does the statuses' walk, then fails (a crash mid-job)."""

    def stopping(job, zset, write, *, start, phase=""):
        if phase.startswith("s"):
            return walk(job, zset, write, start=start, phase=phase)
        raise RuntimeError("worker lost")

    return stopping


def test_user_get_finds_no_one_once_closed(r, world):
    alice = world[0]
    services.account_close(user=alice)
    assert user_get(uid=alice.id) is None


def test_a_pulled_author_leaves_the_homes_that_merged_them_at_once(r, settings):
    settings.FANOUT_PUSH_MAX = 1
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=carol, followee_id=alice.id)
    run_jobs()
    assert r.get(keys.fanout_mode(alice.id)) == "pull"
    services.status_create(author=alice, text="merged at read time")
    run_jobs()
    bob_client = logged_in_client("bob")
    assert "merged at read time" in bob_client.get("/").content.decode()
    delete_account(logged_in_client("alice"))
    # Before any job: her outbox is gone with her account's own step.
    assert "merged at read time" not in bob_client.get("/").content.decode()
    run_jobs()
    assert r.zrange(keys.pulls(bob.id), 0, -1) == []
    assert owned_keys(r, alice.id) == []


def test_deleting_ends_their_blocks_both_ways_and_their_mutes(r, world):
    alice, bob, carol, _, _ = world
    dave = make_user("dave")
    logged_in_client("alice").post("/u/dave/block/")  # alice blocks dave
    logged_in_client("bob").post("/u/alice/block/")  # bob blocks alice
    logged_in_client("alice").post("/u/carol/mute/")
    run_jobs()
    assert r.zscore(keys.blocked_by(dave.id), alice.id) is not None
    assert r.zscore(keys.blocks(bob.id), alice.id) is not None

    delete_account(logged_in_client("alice"))
    run_jobs()
    assert r.zscore(keys.blocked_by(dave.id), alice.id) is None
    assert r.zscore(keys.blocks(bob.id), alice.id) is None
    assert owned_keys(r, alice.id) == []
    # Nor does one server's fan-out index keep anything of hers: she muted someone
    # and was seen, and is neither now.
    assert r.getbit(keys.muters(), alice.id) == 0
    days = get_redis_bytes().getrange(account_keys.seen_days(), 0, -1)
    assert days[2 * alice.id : 2 * alice.id + 2].strip(b"\0") == b""
    # Bob's list of blocked people no longer names a deleted account.
    page = logged_in_client("bob").get("/settings/blocked/").content.decode()
    assert "alice" not in page
    output, failed = timelines_check()
    assert not failed and "No problems found." in output, output


def test_a_deleted_account_blocks_and_mutes_no_one_more(r, world):
    from timeline import blocks

    alice = world[0]
    erin = make_user("erin")
    services.account_close(user=alice)
    run_jobs()
    assert owned_keys(r, alice.id) == []
    # Requests that proved alice before her deletion and write after its job ended.
    assert blocks.block_create(blocker=alice, blocked_id=erin.id) is False
    assert blocks.mute_create(user=alice, muted_id=erin.id) is False
    run_jobs()
    assert owned_keys(r, alice.id) == []
    assert r.zrange(keys.blocked_by(erin.id), 0, -1) == []
