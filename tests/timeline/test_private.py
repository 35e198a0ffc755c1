"""Private accounts (issue #11), as people see them: a follow of a private account
becomes a request its owner approves or denies; only approved followers see its
statuses, which never reach the global timeline."""

from __future__ import annotations

import re

import pytest
import redis
from django.conf import settings
from django.test import Client

from accounts.selectors import user_get_by_username
from tests.helpers import (
    body,
    logged_in_client,
    make_user,
    page,
    run_jobs,
    status_ids,
    store_snapshot,
)
from tests.roundtrips import RoundTripCounter
from timeline import jobs, keys, privacy, repair, services


def texts(html: str) -> list[str]:
    return re.findall(r'<p class="status-text">(.*?)</p>', html, re.S)


def uid(name: str) -> int:
    return user_get_by_username(username=name).id


@pytest.fixture
def alice():
    """Alice, with a private account and two statuses."""
    make_user("alice")
    client = logged_in_client("alice")
    for i in range(2):
        client.post("/post/", {"text": f"alice {i}"})
    answer = client.post("/settings/privacy/", {"private": "on"}, follow=True)
    assert "Your account is private" in body(answer)
    run_jobs(now=jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1)
    return client


@pytest.fixture
def bob():
    make_user("bob")
    return logged_in_client("bob")


def test_a_follow_of_a_private_account_becomes_a_request(r, alice, bob):
    answer = bob.post("/u/alice/follow/", follow=True)
    assert "Follow request sent" in body(answer)
    a, b = uid("alice"), uid("bob")
    assert r.zscore(keys.following(b), a) is None
    assert r.zscore(keys.followers(a), b) is None
    assert r.zscore(keys.follow_requests(a), b) is not None
    assert r.zscore(keys.requested(b), a) is not None
    profile = page(bob, "/u/alice/")
    assert "Requested" in profile
    assert "These statuses are protected" in profile
    assert texts(profile) == []
    run_jobs(sweep=True, now=jobs.now_ms() + 60_000)
    assert texts(page(bob, "/")) == []
    # The owner sees it on the requests page, linked from settings with a count.
    assert "Follow requests (1)" in page(alice, "/settings/")
    assert "@bob" in page(alice, "/settings/requests/")


def test_approve_makes_the_requester_a_follower_with_backfill(r, alice, bob):
    bob.post("/u/alice/follow/")
    answer = alice.post("/settings/requests/bob/approve/", follow=True)
    assert "@bob follows you now." in body(answer)
    a, b = uid("alice"), uid("bob")
    assert r.zscore(keys.following(b), a) is not None
    assert r.zscore(keys.followers(a), b) is not None
    assert r.zcard(keys.follow_requests(a)) == 0
    assert r.zcard(keys.requested(b)) == 0
    assert texts(page(bob, "/")) == ["alice 1", "alice 0"]
    profile = page(bob, "/u/alice/")
    assert texts(profile) == ["alice 1", "alice 0"]
    assert "Unfollow" in profile and "protected" not in profile
    # New statuses reach the approved follower's home, and only theirs.
    alice.post("/post/", {"text": "alice 2"})
    run_jobs()
    assert texts(page(bob, "/"))[0] == "alice 2"
    assert '<a class="person-link" href="/u/bob/">' in page(bob, "/u/alice/followers/")
    assert jobs.stats().depth == 0


def test_deny_and_cancel_leave_nothing(r, alice, bob):
    before = store_snapshot(r)
    bob.post("/u/alice/follow/")
    answer = alice.post("/settings/requests/bob/deny/", follow=True)
    assert "You denied @bob" in body(answer)
    assert "Request to follow" in page(bob, "/u/alice/")
    bob.post("/u/alice/follow/")
    answer = bob.post("/u/alice/request/cancel/", follow=True)
    assert "Request to follow" in body(answer)
    run_jobs(sweep=True, now=jobs.now_ms() + 60_000)
    assert store_snapshot(r) == before
    assert "No follow requests are waiting" in page(alice, "/settings/requests/")


def test_a_non_follower_sees_no_statuses_anywhere(r, alice, bob):
    sid = max(status_ids(page(alice, "/u/alice/")))
    for client in (bob, Client()):
        assert texts(page(client, "/u/alice/")) == []
        assert "These statuses are protected" in page(client, "/u/alice/")
        assert client.get(f"/s/{sid}/").status_code == 404
        assert texts(page(client, "/timeline/")) == []
        assert "account is private" in page(client, "/u/alice/followers/")
        assert "account is private" in page(client, "/u/alice/following/")
    # The owner sees her own everywhere but the global timeline.
    assert alice.get(f"/s/{sid}/").status_code == 200
    assert texts(page(alice, "/u/alice/")) == ["alice 1", "alice 0"]
    assert texts(page(alice, "/timeline/")) == []


def test_private_statuses_never_reach_the_global_timeline(r, alice, bob):
    # Older ones were swept when the account turned private (the fixture's job).
    alice.post("/post/", {"text": "alice private"})
    run_jobs()
    bob.post("/post/", {"text": "bob public"})
    run_jobs()
    assert texts(page(bob, "/timeline/")) == ["bob public"]
    for partition in keys.global_partitions():
        assert all(
            r.hget(keys.status(int(s)), "uid") != str(uid("alice"))
            for s in r.zrange(partition, 0, -1)
            if s != "0"
        )


def test_turning_public_asks_first_as_it_shows_what_was_posted_while_private(
    r, alice, bob
):
    """Going public shows everyone the statuses posted while private (the site's
    privacy is the account's, as Twitter's protected accounts): the settings page
    says so, and unticking the box asks for a confirmation before anything changes
    (found by exploratory testing: it changed at once, without a word)."""
    settings_page = page(alice, "/settings/")
    warning = "including those you posted while private"
    assert warning in settings_page
    asked = alice.post("/settings/privacy/", {})
    assert asked.status_code == 200
    html = body(asked)
    assert "Make your account public?" in html and warning in html
    assert 'name="confirm" value="public"' in html
    assert 'name="csrfmiddlewaretoken"' in html
    assert texts(page(bob, "/u/alice/")) == []  # nothing changed yet
    assert "Follow request sent" in body(bob.post("/u/alice/follow/", follow=True))
    done = alice.post("/settings/privacy/", {"confirm": "public"}, follow=True)
    assert "Your account is public" in body(done)
    assert texts(page(bob, "/u/alice/")) == ["alice 1", "alice 0"]
    # Turning private asks nothing: it shows no one anything new.
    again = alice.post("/settings/privacy/", {"private": "on"}, follow=True)
    assert "Your account is private" in body(again)
    # A form no page sends changes nothing, and says so.
    odd = alice.post("/settings/privacy/", {"confirm": "bogus"}, follow=True)
    assert "Nothing changed: the form was not understood." in body(odd)
    assert texts(page(bob, "/u/alice/")) == []


def test_turning_public_again_reaches_the_global_timeline_from_then_on(r, alice, bob):
    answer = alice.post("/settings/privacy/", {"confirm": "public"}, follow=True)
    assert "Your account is public" in body(answer)
    alice.post("/post/", {"text": "alice public"})
    run_jobs(sweep=True, now=jobs.now_ms() + 60_000)
    # Older statuses are not added back; the profile is open again.
    assert texts(page(bob, "/timeline/")) == ["alice public"]
    assert texts(page(bob, "/u/alice/")) == ["alice public", "alice 1", "alice 0"]
    answer = bob.post("/u/alice/follow/", follow=True)
    assert "Follow request sent" not in body(answer)
    assert r.zscore(keys.following(uid("bob")), uid("alice")) is not None


def test_a_pending_request_of_an_account_turned_public_ends_with_a_follow(
    r, alice, bob
):
    bob.post("/u/alice/follow/")
    alice.post("/settings/privacy/", {"confirm": "public"})
    # Left for the owner: still listed; bob may simply follow now.
    assert "@bob" in page(alice, "/settings/requests/")
    bob.post("/u/alice/follow/")
    a, b = uid("alice"), uid("bob")
    assert r.zscore(keys.followers(a), b) is not None
    assert r.zcard(keys.follow_requests(a)) == 0
    assert r.zcard(keys.requested(b)) == 0


def test_an_account_turning_private_keeps_its_followers(r, bob):
    make_user("carol")
    carol = logged_in_client("carol")
    bob.post("/u/carol/follow/")
    carol.post("/post/", {"text": "carol 0"})
    run_jobs()
    assert texts(page(bob, "/timeline/")) == ["carol 0"]
    carol.post("/settings/privacy/", {"private": "on"})
    # Within the grace the status may still show; its job takes it out.
    run_jobs(sweep=True, now=jobs.now_ms() + 60_000)
    assert texts(page(bob, "/timeline/")) == []
    assert texts(page(bob, "/u/carol/")) == ["carol 0"]
    carol.post("/post/", {"text": "carol 1"})
    run_jobs()
    assert texts(page(bob, "/")) == ["carol 1", "carol 0"]
    assert texts(page(Client(), "/timeline/")) == []


def test_a_post_racing_the_turn_to_private_is_taken_back(r, bob, monkeypatch):
    make_user("carol")
    carol = logged_in_client("carol")
    carol_user = user_get_by_username(username="carol")
    # The request read carol as public; her hash says private by the publish.
    privacy.account_privacy_set(user=carol_user, private=True)
    services.status_create(author=carol_user, text="raced")
    run_jobs()
    assert texts(page(bob, "/timeline/")) == []
    assert texts(page(carol, "/u/carol/")) == ["raced"]


def test_a_block_drops_pending_requests_both_ways(r, alice, bob):
    bob.post("/u/alice/follow/")
    alice.post("/u/bob/block/")
    a, b = uid("alice"), uid("bob")
    assert r.zcard(keys.follow_requests(a)) == 0
    assert r.zcard(keys.requested(b)) == 0
    answer = bob.post("/u/alice/follow/", follow=True)
    assert "blocked you" in body(answer)
    assert r.zcard(keys.follow_requests(a)) == 0
    # The other way: the requester blocks the private account.
    alice.post("/u/bob/unblock/")
    bob.post("/u/alice/follow/")
    bob.post("/u/alice/block/")
    assert r.zcard(keys.follow_requests(a)) == 0
    assert r.zcard(keys.requested(b)) == 0


def test_account_deletion_cleans_requests_both_ways(r, alice, bob):
    from tests.helpers import PASSWORD

    make_user("carol")
    carol = logged_in_client("carol")
    carol.post("/settings/privacy/", {"private": "on"})
    bob.post("/u/alice/follow/")  # bob asks alice
    alice.post("/u/carol/follow/")  # alice asks carol
    a, b, c = uid("alice"), uid("bob"), uid("carol")
    assert alice.post("/settings/delete/", {"password": PASSWORD}).status_code == 302
    run_jobs(sweep=True, now=jobs.now_ms() + 60_000)
    assert [k for k in r.scan_iter(f"*{{{a}}}*")] == []
    assert r.zcard(keys.requested(b)) == 0
    assert r.zcard(keys.follow_requests(c)) == 0
    assert "Request to follow" not in page(bob, "/")


@pytest.mark.real_redis
def test_pages_of_a_private_account_still_cost_two_round_trips(r, alice, bob):
    make_user("carol")
    carol = logged_in_client("carol")
    carol.post("/u/alice/follow/")
    alice.post("/settings/requests/carol/approve/")
    sid = max(status_ids(page(alice, "/u/alice/")))

    def count(client, url: str) -> int:
        client.get(url)  # warm: connections, scripts, the name cache
        with RoundTripCounter() as counter:
            assert client.get(url).status_code in (200, 404)
        assert counter.most_per_node <= 1
        return counter.count

    for client in (bob, carol, alice):
        for url in ("/u/alice/", f"/s/{sid}/", "/u/alice/followers/"):
            assert count(client, url) <= 2, url
    bob.post("/u/alice/follow/")  # one request to list
    assert count(alice, "/settings/requests/") == 2
    assert count(alice, "/settings/") == 2


def test_a_get_changes_nothing(r, alice, bob):
    bob.post("/u/alice/follow/")
    before = store_snapshot(r)
    for url in (
        "/settings/requests/",
        "/settings/requests/bob/approve/",
        "/settings/privacy/",
        "/u/alice/request/cancel/",
    ):
        alice.get(url)
        bob.get(url)
    assert store_snapshot(r) == before


def test_the_posts_need_csrf(alice, bob):
    bob.post("/u/alice/follow/")
    for client, url in (
        (Client(enforce_csrf_checks=True), "/settings/privacy/"),
        (Client(enforce_csrf_checks=True), "/settings/requests/bob/approve/"),
    ):
        client.cookies = alice.cookies
        assert client.post(url, {"private": "on"}).status_code == 403
    checked = Client(enforce_csrf_checks=True)
    checked.cookies = bob.cookies
    assert checked.post("/u/alice/request/cancel/").status_code == 403


def test_approvals_and_requests_take_from_the_follow_budget(settings, alice, bob):
    settings.RATE_LIMIT_FOLLOW = "1/1h"
    bob.post("/u/alice/follow/")
    refused = bob.post("/u/alice/request/cancel/")
    assert refused.status_code == 429
    alice.post("/settings/requests/bob/approve/")
    refused = alice.post("/settings/requests/bob/approve/")
    assert refused.status_code == 429


def test_an_approval_cut_short_is_completed_by_its_job(r, alice, bob, monkeypatch):
    bob.post("/u/alice/follow/")

    def outage(*args, **kwargs):
        raise redis.ConnectionError("Redis stopped answering")

    monkeypatch.setattr(privacy, "approval_complete", outage)
    assert alice.post("/settings/requests/bob/approve/").status_code == 503
    monkeypatch.undo()
    a, b = uid("alice"), uid("bob")
    # Half done: the request is approved, bob follows nobody yet.
    assert r.zcard(keys.follow_requests(a)) == 0
    assert r.zscore(keys.following(b), a) is None
    assert texts(page(bob, "/u/alice/")) == []
    assert run_jobs(sweep=True) == 0  # within the grace period: not yet
    later = jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1
    assert run_jobs(now=later, sweep=True) == 1
    assert r.zscore(keys.followers(a), b) is not None
    assert r.zcard(keys.requested(b)) == 0
    assert texts(page(bob, "/")) == ["alice 1", "alice 0"]
    assert jobs.stats().depth == 0


def test_a_follow_racing_the_turn_to_private_becomes_a_request(r, bob, monkeypatch):
    """The follow passed no privacy check before its gate: the gate, in the
    followee's slot, files a request instead, and the follow ends on bob's side."""
    make_user("carol")
    carol_user = user_get_by_username(username="carol")
    bob_user = user_get_by_username(username="bob")
    real_set = services._follow_set

    def then_private(*args, **kwargs):
        reply = real_set(*args, **kwargs)
        privacy.account_privacy_set(user=carol_user, private=True)
        return reply

    monkeypatch.setattr(services, "_follow_set", then_private)
    outcome = services.follow_ask(follower=bob_user, followee_id=carol_user.id)
    assert outcome == services.REQUESTED
    b, c = bob_user.id, carol_user.id
    assert r.zscore(keys.following(b), c) is None
    assert r.zscore(keys.followers(c), b) is None
    assert r.zscore(keys.requested(b), c) is not None


def test_check_and_repair_fix_one_sided_requests_and_leaks(r, alice, bob):
    bob.post("/u/alice/follow/")
    a, b = uid("alice"), uid("bob")
    r.zrem(keys.requested(b), a)  # a crash between the two sides
    make_user("dave")
    r.zadd(keys.requested(uid("dave")), {a: 1})  # a deny cut short
    sid = max(status_ids(page(alice, "/u/alice/")))
    services.global_add_queue(r, sids=[sid])  # a leak, somehow
    found = repair.timelines_check()
    assert found.one_sided_requests == [(b, a), (uid("dave"), a)]
    assert found.private_in_global == [sid]
    repair.timelines_repair(found)
    assert r.zscore(keys.requested(b), a) is not None
    assert r.zcard(keys.requested(uid("dave"))) == 0
    assert sid not in {
        int(s) for p in keys.global_partitions() for s in r.zrange(p, 0, -1)
    }
    assert repair.timelines_check().problems() == 0


def test_turning_private_takes_statuses_off_the_public_pages_at_once(r, bob):
    """Carol turns private: her statuses leave the global timeline and her tags'
    pages as soon as a worker runs (not after JOB_FOLLOW_GRACE_SECONDS, while
    their own pages already answer 404). A worker that read her as public just
    before, and adds a status after that first sweep, is swept again once the
    grace is over."""

    def shown(client, path: str) -> list[str]:
        return [t.split()[0] for t in texts(page(client, path))]

    make_user("carol")
    carol = logged_in_client("carol")
    carol.post("/post/", {"text": "carol #quiet"})
    run_jobs()
    visitor = Client()
    assert shown(visitor, "/timeline/") == ["carol"]
    assert shown(visitor, "/tags/quiet/") == ["carol"]
    carol.post("/settings/privacy/", {"private": "on"})
    run_jobs()  # what a worker woken by the switch runs at once
    assert shown(visitor, "/timeline/") == []
    assert shown(visitor, "/tags/quiet/") == []
    # A worker stalled between its check and its adds: the status lands after the
    # first sweep.
    late = services.status_create(
        author=user_get_by_username(username="carol"), text="late #quiet"
    )
    services.status_publish(status=late)
    assert shown(visitor, "/tags/quiet/") == ["late"]
    grace = settings.JOB_FOLLOW_GRACE_SECONDS * 1000
    run_jobs(sweep=True, now=jobs.now_ms() + grace + 2000)
    assert shown(visitor, "/timeline/") == []
    assert shown(visitor, "/tags/quiet/") == []


def test_turning_private_again_while_the_second_sweep_waits_sweeps_at_once(r):
    """Carol turns private (the first sweep runs; the second waits out the
    grace), public again, posts, and private again: the new status leaves the
    public pages as soon as a worker runs, not when the first switch's wait ends.
    (Found by review.)"""

    def shown(path: str) -> list[str]:
        return [t.split()[0] for t in texts(page(Client(), path))]

    make_user("carol")
    carol = logged_in_client("carol")
    carol.post("/settings/privacy/", {"private": "on"})
    run_jobs()
    carol.post("/settings/privacy/", {"confirm": "public"})
    carol.post("/post/", {"text": "between #quiet"})
    run_jobs()
    assert shown("/timeline/") == ["between"]
    carol.post("/settings/privacy/", {"private": "on"})
    run_jobs()
    assert shown("/timeline/") == []
    assert shown("/tags/quiet/") == []


def test_turning_private_again_while_a_worker_sweeps_sweeps_again_at_once(
    r, monkeypatch
):
    """The same with the second switch landing while a worker runs the first
    sweep, after it swept: that run's wait for the grace must not postpone the
    sweep the second switch asked for."""

    def shown(path: str) -> list[str]:
        return [t.split()[0] for t in texts(page(Client(), path))]

    make_user("carol")
    carol = logged_in_client("carol")
    sweep = privacy.private_sweep
    switched = []

    def sweep_then_switch_again(*, uid: int) -> int:
        removed = sweep(uid=uid)
        if not switched:
            switched.append(1)
            carol.post("/settings/privacy/", {"confirm": "public"})
            carol.post("/post/", {"text": "between #quiet"})
            run_jobs()
            assert shown("/timeline/") == ["between"]
            carol.post("/settings/privacy/", {"private": "on"})
        return removed

    monkeypatch.setattr(privacy, "private_sweep", sweep_then_switch_again)
    carol.post("/settings/privacy/", {"private": "on"})
    run_jobs()
    assert switched
    assert shown("/timeline/") == []
    assert shown("/tags/quiet/") == []
