"""`/api/v1/instance` and `/api/v2/instance` say how large the site is: the accounts
and statuses that exist (as a client shows them on its server's "about" screen),
as a fan-out worker last added them up, and an image a client can draw."""

from __future__ import annotations

import threading
import time
from pathlib import Path

import pytest
from django.conf import settings
from django.contrib.staticfiles import finders

from config.redis import get_redis, is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import PASSWORD, logged_in_client, make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import counts, fanout, keys, services


@pytest.fixture(autouse=True)
def _backend(redis_backend):
    pass


def shown() -> dict:
    return api_client().get("/api/v1/instance").json()["stats"]


def stats() -> dict:
    """The stats once the worker whose turn it is has added the counts up."""
    counts.site_sum(claim=False)
    return shown()


def post(token: str, text: str, **fields) -> dict:
    response = api_client(token).post(
        "/api/v1/statuses", {"status": text, **fields}, content_type="application/json"
    )
    assert response.status_code == 200, response.content
    return response.json()


def test_an_empty_site_counts_nothing():
    assert shown() == {"user_count": 0, "status_count": 0, "domain_count": 0}
    assert stats() == {"user_count": 0, "status_count": 0, "domain_count": 0}


def test_the_instance_counts_the_accounts_and_statuses_that_exist():
    alice, bob, carol = (make_user(name) for name in ("alice", "bob", "carol"))
    tokens = {user.username: token_for(user) for user in (alice, bob, carol)}
    first = post(tokens["alice"], "first")
    post(tokens["alice"], "second")
    post(tokens["bob"], "a reply", in_reply_to_id=first["id"])
    post(tokens["bob"], "bob's own")
    # A repost is a status (Mastodon counts its local boosts).
    boost = api_client(tokens["carol"]).post(f"/api/v1/statuses/{first['id']}/reblog")
    assert boost.status_code == 200, boost.content
    assert stats() == {"user_count": 3, "status_count": 5, "domain_count": 0}

    gone = api_client(tokens["alice"]).delete(f"/api/v1/statuses/{first['id']}")
    assert gone.status_code == 200, gone.content
    # Alice's status and, with it, carol's repost of it (its unlink job).
    run_jobs()
    assert stats()["status_count"] == 3

    response = logged_in_client("bob").post("/settings/delete/", {"password": PASSWORD})
    assert response.status_code == 302
    # Bob and his two statuses are gone from the counts as from every page.
    assert stats() == {"user_count": 2, "status_count": 1, "domain_count": 0}
    run_jobs()  # the account job changes nothing more
    assert stats() == {"user_count": 2, "status_count": 1, "domain_count": 0}


def test_the_instance_shows_the_last_sum_until_the_next():
    alice = make_user("alice")
    assert stats()["user_count"] == 1
    services.status_create(author=alice, text="not yet added up")
    make_user("bob")
    # A post writes its slot's counts only: the site's sum waits for a worker.
    assert shown() == {"user_count": 1, "status_count": 0, "domain_count": 0}
    assert stats() == {"user_count": 2, "status_count": 1, "domain_count": 0}


def test_a_post_retried_with_its_reserved_id_counts_once():
    alice = make_user("alice")
    status = services.status_create(author=alice, text="once")
    services.status_create(author=alice, text="once", reserved_id=status.id)
    assert stats()["status_count"] == 1
    services.status_delete(user=alice, sid=status.id)
    services.status_remove(author_id=alice.id, status=status)  # a repeat
    assert stats()["status_count"] == 0


def test_many_authors_on_every_slot_are_added_up():
    users = [make_user(f"user{n}") for n in range(40)]
    for n, user in enumerate(users):
        for i in range(n % 3):
            services.status_create(author=user, text=f"status {i}")
    assert stats() == {"user_count": 40, "status_count": 39, "domain_count": 0}


def test_one_worker_adds_the_counts_up_an_interval(settings):
    settings.SITE_COUNTS_SECONDS = 60
    alice = make_user("alice")
    services.status_create(author=alice, text="counted")
    assert counts.site_sum() == counts.SiteCounts(users=1, statuses=1, active_month=1)
    services.status_create(author=alice, text="next turn")
    # Another worker, the same interval: the turn is taken, nothing is added up.
    assert counts.site_sum() is None
    assert shown()["status_count"] == 1
    settings.SITE_COUNTS_SECONDS = 0  # no worker adds anything up
    get_redis().delete(keys.counts_site_claim())
    assert counts.site_sum() is None
    assert shown()["status_count"] == 1


def test_a_running_worker_adds_the_counts_up_every_interval(settings):
    settings.SITE_COUNTS_SECONDS = 0.2
    alice = make_user("alice")
    stop = threading.Event()
    worker = threading.Thread(target=fanout.Worker(stop=stop).run)
    worker.start()
    try:
        for statuses in (0, 1):
            if statuses:
                services.status_create(author=alice, text="later")
            want = {"user_count": 1, "status_count": statuses, "domain_count": 0}
            deadline = time.monotonic() + 10
            while shown() != want and time.monotonic() < deadline:
                time.sleep(0.05)
            assert shown() == want
    finally:
        stop.set()
        worker.join(10)


def test_counting_costs_a_post_or_a_delete_no_round_trip():
    # What a post and a delete cost before the site counted anything: their own
    # step and the clock of the id (on a Cluster the id's clock, the global
    # partition and the wake-up shard lie on other nodes).
    before = 4 if is_cluster() else 2
    alice = make_user("alice")
    services.status_create(author=alice, text="warm the scripts up")
    with RoundTripCounter() as counter:
        status = services.status_create(author=alice, text="counted")
    assert counter.count == before
    with RoundTripCounter() as counter:
        services.status_delete(user=alice, sid=status.id)
    assert counter.count == before
    # The instance reads the sum in one round trip, whatever the site's size.
    stats()
    with RoundTripCounter() as counter:
        assert api_client().get("/api/v1/instance").status_code == 200
    assert counter.count == 1


def test_v2_thumbnail_is_a_png_the_site_serves():
    for version in ("v1", "v2"):
        data = api_client().get(f"/api/{version}/instance").json()
        url = data["thumbnail"]["url"] if version == "v2" else data["thumbnail"]
        assert url.startswith("http://testserver" + settings.STATIC_URL), url
        path = url.removeprefix("http://testserver" + settings.STATIC_URL)
        image = finders.find(path)
        assert image and Path(image).read_bytes().startswith(b"\x89PNG"), url


def test_a_repair_during_a_sign_up_keeps_the_new_account_counted(monkeypatch):
    """`timelines repair` on a live site: an account whose sign-up completes after
    the recount's SCAN passed stays counted (the recount wrote its slot without it,
    for good: the instance showed one account fewer until a quiet repair, and the
    account's close took its slot below zero)."""
    make_user("alice")
    pattern = keys.counts_pattern

    def sign_up_meanwhile() -> str:
        # Between the SCAN of the users and the slots' recount.
        if not any(u.username == "bob" for u in signed):
            signed.append(make_user("bob"))
        return pattern()

    signed: list = []
    monkeypatch.setattr(counts.keys, "counts_pattern", sign_up_meanwhile)
    counts.counts_recount(write=True)
    monkeypatch.setattr(counts.keys, "counts_pattern", pattern)
    assert stats()["user_count"] == 2
    assert counts.counts_recount(write=False).off == []


def test_v2_active_month_counts_the_people_seen_within_30_days(monkeypatch):
    """Mastodon's `usage.users.active_month`: the people who signed up, used a page
    or an app within the last 30 days (today's included), each once, as the
    worker's sum last counted them (it was always 0)."""
    from accounts import services as account_services

    today = account_services.seen_day()

    def then(days_ago: int, name: str):
        # Signed up `days_ago` days ago (the day their activity was noted).
        monkeypatch.setattr(account_services, "seen_day", lambda: today - days_ago)
        try:
            return make_user(name)
        finally:
            monkeypatch.setattr(account_services, "seen_day", lambda: today)

    for name in ("alice", "bob"):
        make_user(name)  # today
    then(40, "dave")  # away since
    then(29, "gina")  # the month's first day
    then(30, "hal")  # the day before it
    then(40, "erin")
    then(40, "frank")
    assert logged_in_client("erin").get("/").status_code == 200  # back on the site
    frank = user_get_by_name("frank")
    client = api_client(token_for(frank))
    assert client.get("/api/v1/accounts/verify_credentials").status_code == 200
    client.get("/api/v1/timelines/home")  # a second request of the day: once
    assert v2()["usage"]["users"]["active_month"] == 0  # not added up yet
    counts.site_sum(claim=False)
    assert v2()["usage"]["users"]["active_month"] == 5  # alice bob gina erin frank
    assert shown()["user_count"] == 7  # every account, active or not


def test_v2_active_month_is_never_more_than_the_accounts_that_exist():
    """A closed account leaves the accounts at once, but no day's record of who was
    seen can forget it (nor is a HyperLogLog's count exact: 1,000 people count as
    1,001): the people active this month are never more than the site's people."""
    alice = make_user("alice")
    for name in ("bob", "carol"):
        services.account_close(user=make_user(name))  # seen today, then gone
    run_jobs()
    counts.site_sum(claim=False)
    assert shown()["user_count"] == 1
    assert v2()["usage"]["users"]["active_month"] == 1  # alice
    services.account_close(user=alice)
    run_jobs()
    counts.site_sum(claim=False)
    assert v2()["usage"]["users"]["active_month"] == 0


def test_v2_says_how_many_statuses_can_be_pinned():
    from timeline.pins import PINS_MAX

    accounts = v2()["configuration"]["accounts"]
    assert accounts["max_pinned_statuses"] == PINS_MAX == 5


def v2() -> dict:
    return api_client().get("/api/v2/instance").json()


def user_get_by_name(name: str):
    from accounts.selectors import user_get_by_username

    return user_get_by_username(username=name)
