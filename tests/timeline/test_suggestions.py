"""Dismissed suggestions: someone the viewer dismissed from "who to follow" is
suggested again nowhere, neither as a friend of friends nor as one of the most
followed, neither on `/people/suggested/` nor on the empty home; the dismissals
are the viewer's own, capped, and leave with their account."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from accounts.selectors import PageReads
from accounts.services import session_create
from tests.helpers import logged_in_client, make_user, page, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import keys, selectors, services, suggestions


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    """bob follows carol and dave; both follow erin, carol also frank; gina is
    followed by carol and erin (one of the most followed, not bob's friend of a
    friend through anyone but carol)."""
    users = {
        name: make_user(name)
        for name in ("alice", "bob", "carol", "dave", "erin", "frank", "gina")
    }
    for follower, followee in [
        ("carol", "erin"),
        ("dave", "erin"),
        ("carol", "frank"),
        ("bob", "carol"),
        ("bob", "dave"),
        ("erin", "gina"),
        ("alice", "gina"),
    ]:
        services.follow_create(follower=users[follower], followee_id=users[followee].id)
    run_jobs()  # the follows' own (their suggestions' rebuilds)
    return users


def suggested(user) -> list[str]:
    return [
        u.username
        for u in selectors.suggestions_get(
            reads=PageReads(session_create(uid=user.id)), shown=20
        )
    ]


def suggested_names(client: Client) -> list[str]:
    html = page(client, "/people/suggested/")
    return re.findall(r'<a class="person-link" href="/u/([^/]+)/">', html)


def test_a_dismissed_friend_of_a_friend_is_suggested_no_more(people, r):
    bob, erin = people["bob"], people["erin"]
    assert suggested(bob)[:2] == ["erin", "frank"]
    assert suggestions.suggestion_dismiss(user=bob, dismissed_id=erin.id) is True
    assert "erin" not in suggested(bob)
    # Out of the stored list at once, and out of every rebuild after.
    assert str(erin.id) not in r.zrange(keys.suggestions(bob.id), 0, -1)
    suggestions.suggestions_rebuild(uid=bob.id)
    assert r.zrange(keys.suggestions(bob.id), 0, -1) == [str(people["frank"].id)]
    assert "erin" not in suggested(bob)


def test_a_dismissed_popular_account_is_suggested_no_more(people):
    newcomer = make_user("hal")
    assert "gina" in suggested(newcomer)  # no friends: the most followed
    suggestions.suggestion_dismiss(user=newcomer, dismissed_id=people["gina"].id)
    assert "gina" not in suggested(newcomer)
    assert "erin" in suggested(newcomer)  # the others stay


def test_a_dismissal_is_the_viewers_own(people):
    dave_sees = suggested(people["dave"])
    suggestions.suggestion_dismiss(user=people["bob"], dismissed_id=people["erin"].id)
    assert suggested(people["dave"]) == dave_sees
    assert "erin" in suggested(make_user("ivy"))


def test_nobody_who_does_not_exist_is_stored(people, r):
    bob = people["bob"]
    assert suggestions.suggestion_dismiss(user=bob, dismissed_id=10**12) is False
    assert suggestions.suggestion_dismiss(user=bob, dismissed_id=bob.id) is False
    assert not r.exists(keys.suggestions_dismissed(bob.id))


def test_dismissing_twice_keeps_one_entry(people, r):
    bob, erin = people["bob"], people["erin"]
    assert suggestions.suggestion_dismiss(user=bob, dismissed_id=erin.id) is True
    assert suggestions.suggestion_dismiss(user=bob, dismissed_id=erin.id) is False
    assert r.zcard(keys.suggestions_dismissed(bob.id)) == 1


def test_past_the_cap_the_oldest_dismissal_goes(people, r, settings):
    settings.SUGGESTION_DISMISSALS_MAX = 2
    bob = people["bob"]
    for name in ("erin", "frank", "gina"):
        suggestions.suggestion_dismiss(user=bob, dismissed_id=people[name].id)
    held = r.zrange(keys.suggestions_dismissed(bob.id), 0, -1)
    assert held == [str(people["frank"].id), str(people["gina"].id)]
    # erin, dismissed first, is forgotten: suggested again.
    assert "erin" in suggested(bob)
    assert not {"frank", "gina"} & set(suggested(bob))


def test_the_account_deletion_deletes_the_dismissals(people, r):
    bob = people["bob"]
    suggestions.suggestion_dismiss(user=bob, dismissed_id=people["erin"].id)
    assert r.exists(keys.suggestions_dismissed(bob.id))
    logged_in_client("bob").post(
        "/settings/delete/", {"password": "correct-horse-battery"}
    )
    run_jobs()
    assert not r.exists(keys.suggestions_dismissed(bob.id))


# The site: a Dismiss button on /people/suggested/, honoured on the empty home.


def test_the_suggested_page_dismisses_and_comes_back(people):
    bob = logged_in_client("bob")
    html = page(bob, "/people/suggested/")
    assert 'action="/people/suggested/erin/dismiss/"' in html
    assert 'aria-label="Dismiss @erin"' in html
    response = bob.post(
        "/people/suggested/erin/dismiss/", {"next": "/people/suggested/"}
    )
    assert response.status_code == 302
    assert response["Location"] == "/people/suggested/"
    after = bob.get("/people/suggested/")
    assert "@erin will not be suggested again." in after.content.decode()
    assert "erin" not in suggested_names(bob)
    assert "frank" in suggested_names(bob)


def test_the_empty_home_honours_dismissals(people):
    hal = make_user("hal")
    client = logged_in_client("hal")
    assert 'action="/u/gina/follow/"' in page(client, "/")
    client.post("/people/suggested/gina/dismiss/")
    assert 'action="/u/gina/follow/"' not in page(client, "/")
    assert 'action="/u/erin/follow/"' in page(client, "/")
    assert "gina" not in suggested(hal)


def test_dismissing_is_a_post_for_the_signed_in_only(people, r):
    bob = logged_in_client("bob")
    assert bob.get("/people/suggested/erin/dismiss/").status_code == 405
    visitor = Client().post("/people/suggested/erin/dismiss/")
    assert visitor.status_code == 302 and "/login/" in visitor["Location"]
    assert bob.post("/people/suggested/nobody/dismiss/").status_code == 404
    assert not r.exists(keys.suggestions_dismissed(people["bob"].id))


def test_dismissing_needs_the_pages_csrf_token(people, r):
    bob = logged_in_client("bob", enforce_csrf_checks=True)
    assert bob.post("/people/suggested/erin/dismiss/").status_code == 403
    assert not r.exists(keys.suggestions_dismissed(people["bob"].id))
    html = page(bob, "/people/suggested/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]
    response = bob.post(
        "/people/suggested/erin/dismiss/", {"csrfmiddlewaretoken": token}
    )
    assert response.status_code == 302
    assert "erin" not in suggested_names(bob)


def test_dismissing_the_suggested_of_a_foreign_next_stays_on_the_site(people):
    bob = logged_in_client("bob")
    response = bob.post(
        "/people/suggested/erin/dismiss/", {"next": "https://evil.example/"}
    )
    assert response["Location"] == "/people/suggested/"


def round_trips(client: Client, url: str) -> int:
    client.get(url)  # warm: connections, scripts, the name cache
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    return counter.count


@pytest.mark.single_server
def test_dismissals_cost_the_pages_no_round_trip(people):
    bob = logged_in_client("bob")
    bob.post("/people/suggested/erin/dismiss/")
    assert round_trips(bob, "/people/suggested/") == 2
    make_user("hal")
    hal = logged_in_client("hal")
    hal.post("/people/suggested/gina/dismiss/")
    assert "People to follow" in page(hal, "/")
    assert round_trips(hal, "/") == 2
