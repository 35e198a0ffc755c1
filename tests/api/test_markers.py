"""Markers through the client API (Mastodon's `/api/v1/markers`): an app saves
where its user stopped reading, another reads it back; versions, the timelines
asked for, validation, scopes, privacy between users, the account's deletion,
and the notifications marker as the site's own read mark (the badge)."""

from __future__ import annotations

import re
import threading

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import (
    PASSWORD,
    logged_in_client,
    make_user,
    page,
    run_jobs,
    store_snapshot,
)
from tests.roundtrips import get_round_trips
from timeline import blocks, keys, markers, privacy, services, social

BOTH = "/api/v1/markers?timeline[]=home&timeline[]=notifications"


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    for name in ("POST", "LIKE", "FOLLOW", "API"):
        setattr(settings, f"RATE_LIMIT_{name}", "off")


def _api(user, scopes=("read", "write")):
    return api_client(token_for(user, scopes=scopes))


def _save(client, **positions):
    """POST the positions as a form (`home[last_read_id]=…`); the response."""
    return client.post(
        "/api/v1/markers",
        {f"{timeline}[last_read_id]": str(v) for timeline, v in positions.items()},
    )


def _saved(client, **positions) -> dict:
    response = _save(client, **positions)
    assert response.status_code == 200, response.content
    return response.json()


def _badge(html: str) -> str | None:
    found = re.search(r"data-notifications-badge>([^<]*)<", html)
    return found.group(1) if found else None


def _unread(client) -> int:
    return client.get("/api/v2/notifications/unread_count").json()["count"]


def test_a_saved_home_marker_reads_back_and_counts_its_saves():
    alice = make_user("alice")
    client = _api(alice)
    first = _saved(client, home=1001)
    assert set(first) == {"home"}
    assert first["home"]["last_read_id"] == "1001"
    assert first["home"]["version"] == 0  # Mastodon's first lock_version
    assert re.fullmatch(
        r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z", first["home"]["updated_at"]
    )
    assert client.get("/api/v1/markers?timeline[]=home").json() == first
    second = _saved(client, home=1002)["home"]
    assert (second["last_read_id"], second["version"]) == ("1002", 1)
    assert second["updated_at"] >= first["home"]["updated_at"]
    # The same position again moves nothing: neither the version nor the time.
    assert _saved(client, home=1002)["home"] == second
    # An earlier one is a move (an app may go back), as Mastodon keeps any.
    back = _saved(client, home=900)["home"]
    assert (back["last_read_id"], back["version"]) == ("900", 2)
    assert client.get("/api/v1/markers?timeline[]=home").json() == {"home": back}


def test_only_the_timelines_asked_for_and_saved_are_answered():
    alice = make_user("alice")
    client = _api(alice)
    assert client.get(BOTH).json() == {}
    saved = _saved(client, home=7)
    assert client.get(BOTH).json() == saved
    assert client.get("/api/v1/markers?timeline[]=notifications").json() == {}
    assert client.get("/api/v1/markers").json() == {}
    assert client.get("/api/v1/markers?timeline[]=home&timeline[]=lists").json() == (
        saved
    )
    assert client.get("/api/v1/markers?timeline=home").json() == saved


def test_a_json_body_saves_both_timelines_at_once():
    alice, bob = make_user("alice"), make_user("bob")
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=bob, sid=sid)
    run_jobs()
    client = _api(alice)
    newest = client.get("/api/v1/notifications").json()[0]["id"]
    response = client.post(
        "/api/v1/markers",
        {"home": {"last_read_id": sid}, "notifications": {"last_read_id": newest}},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    saved = response.json()
    assert set(saved) == {"home", "notifications"}
    assert saved["home"]["last_read_id"] == str(sid)
    assert int(saved["notifications"]["last_read_id"]) >= int(newest)
    assert client.get(BOTH).json() == saved


@pytest.mark.parametrize(
    "body",
    [
        {"home[last_id]": "5"},
        {"home[last_read_id]": ""},
        {"home[last_read_id]": "abc"},
        {"home[last_read_id]": "-5"},
        {"home[last_read_id]": str(2**63)},
    ],
)
def test_a_bad_save_is_a_422_and_saves_nothing(body):
    alice = make_user("alice")
    client = _api(alice)
    response = client.post("/api/v1/markers", body)
    assert response.status_code == 422, response.content
    assert response.json()["error"].startswith("Validation failed: ")
    assert client.get(BOTH).json() == {}


def test_a_bad_json_save_is_a_422():
    client = _api(make_user("alice"))
    for body in (
        {"home": {"last_read_id": [1, 2]}},
        {"home": {"last_read_id": True}},
        {"home": {}},
    ):
        response = client.post("/api/v1/markers", body, content_type="application/json")
        assert response.status_code == 422, (body, response.content)
    assert client.get(BOTH).json() == {}


def test_a_timeline_the_site_has_not_is_skipped_as_mastodon_skips_it():
    """Mastodon saves the timelines it knows and skips the others (`slice`): an
    app that also sends one of a newer version's keeps its home marker."""
    client = _api(make_user("alice"))
    response = client.post(
        "/api/v1/markers", {"home[last_read_id]": "5", "lists[last_read_id]": "7"}
    )
    assert response.status_code == 200, response.content
    assert set(response.json()) == {"home"}
    assert response.json()["home"]["last_read_id"] == "5"
    nothing = client.post("/api/v1/markers", {"public[last_read_id]": "5"})
    assert nothing.status_code == 200 and nothing.json() == {}
    empty = client.post("/api/v1/markers", {})
    assert empty.status_code == 200 and empty.json() == {}
    assert set(client.get(BOTH).json()) == {"home"}


def test_each_method_needs_its_scope():
    alice = make_user("alice")
    _saved(_api(alice), home=5)
    reader = _api(alice, scopes=("read:statuses",))
    assert reader.get(BOTH).status_code == 200
    assert _save(reader, home=6).status_code == 403
    writer = _api(alice, scopes=("write:statuses",))
    assert _save(writer, home=6).status_code == 200
    assert writer.get(BOTH).status_code == 403
    notifications_only = _api(alice, scopes=("read:notifications",))
    assert notifications_only.get(BOTH).status_code == 403
    assert api_client().get(BOTH).status_code == 401
    assert _save(api_client(), home=7).status_code == 401
    # The refused save changed nothing.
    assert reader.get(BOTH).json()["home"]["last_read_id"] == "6"
    assert api_client().options("/api/v1/markers")["Access-Control-Allow-Methods"] == (
        "GET, POST, OPTIONS"
    )


def test_markers_are_their_users_own():
    alice, bob = make_user("alice"), make_user("bob")
    saved = _saved(_api(alice), home=42)
    assert _api(bob).get(BOTH).json() == {}
    _saved(_api(bob), home=43)
    assert _api(alice).get(BOTH).json() == saved


def test_reading_them_writes_nothing(r):
    alice = make_user("alice")
    client = _api(alice)
    _saved(client, home=5)
    client.get(BOTH)  # today's last-seen stamp: the one write a GET may make
    before = store_snapshot(r)
    assert client.get(BOTH).status_code == 200
    assert store_snapshot(r) == before


@pytest.mark.real_redis
def test_reading_them_rides_with_the_tokens_check():
    """One round trip, on a Cluster too: the markers and the read mark are in the
    viewer's slot, read with the token's check."""
    alice = make_user("alice")
    client = _api(alice)
    _saved(client, home=5)
    assert get_round_trips(client, BOTH) == 1


def test_saving_the_notifications_marker_in_an_app_clears_the_sites_badge():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=bob, sid=sid)
    services.follow_create(follower=carol, followee_id=alice.id)
    run_jobs()
    browser = logged_in_client("alice")
    assert _badge(page(browser, "/")) == "2"
    client = _api(alice)
    assert _unread(client) == 2
    listed = client.get("/api/v1/notifications").json()
    newest = max(int(n["id"]) for n in listed)
    saved = _saved(client, notifications=newest)["notifications"]
    assert saved["version"] == 0
    # Every notification there is is read, by the ids a client compares.
    assert all(int(n["id"]) <= int(saved["last_read_id"]) for n in listed)
    assert _unread(client) == 0
    assert client.get("/api/v1/notifications/unread_count").json() == {"count": 0}
    assert _badge(page(browser, "/")) is None
    # What comes next is above the marker: unread in the app and on the site.
    social.status_repost(user=bob, sid=sid)
    run_jobs()
    assert _unread(client) == 1
    assert _badge(page(browser, "/")) == "1"
    top = client.get("/api/v1/notifications").json()[0]
    assert int(top["id"]) > int(saved["last_read_id"])
    assert client.get(BOTH).json() == {"notifications": saved}


def test_saving_the_newest_listed_clears_what_the_api_does_not_list_above_it():
    """An app reads every notification the API lists and saves the newest one's
    id: what the API never lists above it ("bob approved your follow request",
    which has no Mastodon type) must not keep its unread count and the site's
    badge up for good, as the page's own "read" would clear them."""
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=carol, sid=sid)
    run_jobs()
    privacy.account_privacy_set(user=bob, private=True)
    run_jobs()
    services.follow_create(follower=alice, followee_id=bob.id)
    run_jobs()
    privacy.follow_request_approve(owner=bob, requester_id=alice.id)
    run_jobs()
    client = _api(alice)
    listed = client.get("/api/v1/notifications").json()
    assert [n["type"] for n in listed] == ["favourite"]
    _saved(client, notifications=listed[0]["id"])
    assert _unread(client) == 0
    assert client.get("/api/v1/notifications/unread_count").json() == {"count": 0}
    assert _badge(page(logged_in_client("alice"), "/")) is None
    # What comes after the save is still unread.
    social.status_repost(user=carol, sid=sid)
    run_jobs()
    assert _unread(client) == 1


def test_saving_the_newest_listed_clears_a_muted_actors_notification_above_it():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=carol, sid=sid)
    run_jobs()
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    blocks.mute_create(user=alice, muted_id=bob.id)
    client = _api(alice)
    listed = client.get("/api/v1/notifications").json()
    assert [n["type"] for n in listed] == ["favourite"]
    _saved(client, notifications=listed[0]["id"])
    assert _unread(client) == 0
    assert _badge(page(logged_in_client("alice"), "/")) is None


def test_an_older_save_leaves_unread_what_the_api_lists_above_it():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=carol, sid=sid)
    run_jobs()
    privacy.account_privacy_set(user=bob, private=True)
    run_jobs()
    services.follow_create(follower=alice, followee_id=bob.id)
    run_jobs()
    privacy.follow_request_approve(owner=bob, requester_id=alice.id)
    run_jobs()
    services.follow_create(follower=carol, followee_id=alice.id)
    run_jobs()
    client = _api(alice)
    listed = client.get("/api/v1/notifications").json()
    assert [n["type"] for n in listed] == ["follow", "favourite"]
    saved = _saved(client, notifications=listed[1]["id"])["notifications"]
    assert int(saved["last_read_id"]) < int(listed[0]["id"])
    assert _unread(client) >= 1
    assert _badge(page(logged_in_client("alice"), "/")) is not None


def test_reading_on_the_site_moves_the_apps_notifications_marker():
    alice, bob = make_user("alice"), make_user("bob")
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=bob, sid=sid)
    run_jobs()
    client = _api(alice)
    first_id = client.get("/api/v1/notifications").json()[0]["id"]
    first = _saved(client, notifications=first_id)["notifications"]
    social.status_repost(user=bob, sid=sid)
    run_jobs()
    browser = logged_in_client("alice")
    html = page(browser, "/notifications/")
    up_to = re.search(r'name="up_to" value="(\d+)"', html)[1]
    assert browser.post("/notifications/read/", {"up_to": up_to}).status_code == 302
    moved = client.get(BOTH).json()["notifications"]
    assert moved["version"] == first["version"] + 1
    assert moved["updated_at"] >= first["updated_at"]
    listed = client.get("/api/v1/notifications").json()
    assert all(int(n["id"]) <= int(moved["last_read_id"]) for n in listed)
    assert int(moved["last_read_id"]) > int(first["last_read_id"])


def test_the_notifications_marker_only_moves_up_to_the_newest():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=bob, sid=sid)
    services.follow_create(follower=carol, followee_id=alice.id)
    run_jobs()
    client = _api(alice)
    oldest, newest = sorted(
        int(n["id"]) for n in client.get("/api/v1/notifications").json()
    )
    read = _saved(client, notifications=newest)["notifications"]
    # An app with a stale view does not make read notifications unread again.
    assert _saved(client, notifications=oldest) == {"notifications": read}
    assert _saved(client, notifications=1) == {"notifications": read}
    assert _unread(client) == 0
    # Past the newest is the newest: a later notification is unread.
    assert _saved(client, notifications=2**63 - 1) == {"notifications": read}
    social.status_repost(user=bob, sid=sid)
    run_jobs()
    assert _unread(client) == 1


def test_with_no_notifications_the_marker_reads_nothing_read():
    alice, bob = make_user("alice"), make_user("bob")
    client = _api(alice)
    saved = _saved(client, notifications=10**15)["notifications"]
    assert (saved["last_read_id"], saved["version"]) == ("0", 0)
    sid = services.status_create(author=alice, text="hello").id
    social.status_like(user=bob, sid=sid)
    run_jobs()
    assert _unread(client) == 1
    # Cleared: nothing is left, nothing is read.
    newest = client.get("/api/v1/notifications").json()[0]["id"]
    assert _saved(client, notifications=newest)["notifications"]["version"] == 1
    assert client.post("/api/v1/notifications/clear").status_code == 200
    assert client.get(BOTH).json()["notifications"]["last_read_id"] == "0"


def test_concurrent_saves_lose_no_version():
    alice = make_user("alice")
    errors: list[BaseException] = []

    def save(n: int) -> None:
        try:
            for i in range(10):
                markers.markers_save(user=alice, home=n * 100 + i + 1)
        except BaseException as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=save, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert errors == []
    assert _api(alice).get(BOTH).json()["home"]["version"] == 59


def test_the_accounts_deletion_deletes_its_markers(r):
    alice = make_user("alice")
    _saved(_api(alice), home=5)
    assert r.exists(keys.markers(alice.id))
    services.account_delete(user=alice, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    assert not r.exists(keys.markers(alice.id))


def test_a_save_that_lands_after_the_accounts_deletion_writes_nothing(r):
    """A save in flight as the account is deleted (its request was let in before)
    must not leave a markers hash that nothing will ever delete."""
    alice = make_user("alice")
    services.account_delete(user=alice, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    assert markers.markers_save(user=alice, home=5, notifications=7) == {}
    assert not r.exists(keys.markers(alice.id))
    assert not r.exists(keys.notifications_read(alice.id))
