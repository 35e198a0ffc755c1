"""The client API's follow suggestions (Mastodon's `/api/v2/suggestions`, its v1
form, and `DELETE /api/v1/suggestions/:account_id`): the site's "who to follow",
with its dismissals."""

from __future__ import annotations

import re

import pytest

from accounts.selectors import user_id_by_username
from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import keys, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"


@pytest.fixture
def people():
    """bob follows carol and dave; both follow erin, carol also frank; alice and
    erin follow gina (one of the most followed, no friend of bob's friends)."""
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
    run_jobs()  # the follows' own (the followers' suggestions)
    return users


def client_of(user, scopes=("read", "write", "follow", "push")):
    return api_client(token_for(user, scopes=scopes))


def names(entities: list[dict]) -> list[str]:
    return [
        e["account"]["username"] if "account" in e else e["username"] for e in entities
    ]


def test_v2_answers_suggestions_with_their_sources(people):
    bob = client_of(people["bob"])
    response = bob.get("/api/v2/suggestions")
    assert response.status_code == 200, response.content
    found = response.json()
    by_name = {s["account"]["username"]: s for s in found}
    assert names(found)[:2] == ["erin", "frank"]  # friends of friends first
    assert not {"bob", "carol", "dave"} & set(by_name)
    # erin: a friend of friends and among the most followed; gina only the latter.
    assert by_name["erin"]["sources"] == ["friends_of_friends", "most_followed"]
    assert by_name["erin"]["source"] == "past_interactions"
    assert by_name["gina"]["sources"] == ["most_followed"]
    assert by_name["gina"]["source"] == "global"
    assert set(by_name["erin"]) == {"source", "sources", "account"}
    # The Account is every endpoint's Account.
    erin = bob.get(f"/api/v1/accounts/{people['erin'].id}").json()
    assert by_name["erin"]["account"] == erin


def test_v1_answers_the_same_people_as_plain_accounts(people):
    bob = client_of(people["bob"])
    v1 = bob.get("/api/v1/suggestions")
    assert v1.status_code == 200, v1.content
    v2 = bob.get("/api/v2/suggestions").json()
    assert v1.json() == [s["account"] for s in v2]
    assert names(v1.json())[:2] == ["erin", "frank"]


def test_limit_is_40_by_default_80_at_most_and_offset_skips(people, r):
    for n in range(85):
        make_user(f"p{n:02d}")
    run_jobs()
    # Popular as a follow would make them (the list keeps the top 100).
    popular = {
        str(user_id_by_username(username=f"p{n:02d}")): 1000 - n for n in range(85)
    }
    r.zadd(keys.popular_users(), popular)
    newcomer = client_of(make_user("newcomer"))
    assert len(newcomer.get("/api/v2/suggestions").json()) == 40
    assert len(newcomer.get("/api/v1/suggestions").json()) == 40
    assert len(newcomer.get("/api/v2/suggestions", {"limit": 500}).json()) == 80
    first = names(newcomer.get("/api/v2/suggestions", {"limit": 5}).json())
    assert first == [f"p{n:02d}" for n in range(5)]
    later = newcomer.get("/api/v2/suggestions", {"limit": 2, "offset": 3}).json()
    assert names(later) == ["p03", "p04"]
    bad = newcomer.get("/api/v2/suggestions", {"limit": "many"})
    assert bad.status_code == 422 and "limit" in bad.json()["error"]


def test_delete_dismisses_on_the_api_and_the_site(people, r):
    bob = client_of(people["bob"])
    erin = people["erin"]
    response = bob.delete(f"/api/v1/suggestions/{erin.id}")
    assert response.status_code == 200 and response.json() == {}
    assert "erin" not in names(bob.get("/api/v2/suggestions").json())
    assert "erin" not in names(bob.get("/api/v1/suggestions").json())
    html = page(logged_in_client("bob"), "/people/suggested/")
    listed = re.findall(r'<a class="person-link" href="/u/([^/]+)/">', html)
    assert "erin" not in listed and "frank" in listed
    # A repeat, and someone who does not exist: 200 with {}, as Mastodon answers
    # (its dismissal of nobody stores nothing: neither does this one).
    assert bob.delete(f"/api/v1/suggestions/{erin.id}").json() == {}
    gone = bob.delete("/api/v1/suggestions/999999999")
    assert gone.status_code == 200 and gone.json() == {}
    assert r.zrange(keys.suggestions_dismissed(people["bob"].id), 0, -1) == [
        str(erin.id)
    ]


def test_a_dismissal_on_the_site_shows_on_the_api(people):
    logged_in_client("bob").post(
        f"/people/suggested/{people['frank'].username}/dismiss/"
    )
    assert "frank" not in names(
        client_of(people["bob"]).get("/api/v2/suggestions").json()
    )


def test_scopes_are_mastodons(people):
    bob, erin = people["bob"], people["erin"]
    reader = client_of(bob, scopes=("read:accounts",))
    assert reader.get("/api/v2/suggestions").status_code == 200
    assert reader.get("/api/v1/suggestions").status_code == 200
    refused = reader.delete(f"/api/v1/suggestions/{erin.id}")
    assert refused.status_code == 403 and refused.json()["error"]
    assert "erin" in names(reader.get("/api/v2/suggestions").json())
    elsewhere = client_of(bob, scopes=("read:statuses", "write:statuses"))
    assert elsewhere.get("/api/v2/suggestions").status_code == 403
    writer = client_of(bob, scopes=("write:accounts",))
    assert writer.delete(f"/api/v1/suggestions/{erin.id}").status_code == 200
    assert "erin" not in names(reader.get("/api/v2/suggestions").json())


def test_without_a_token_401(people):
    anonymous = api_client()
    assert anonymous.get("/api/v2/suggestions").status_code == 401
    assert anonymous.get("/api/v1/suggestions").status_code == 401
    response = anonymous.delete(f"/api/v1/suggestions/{people['erin'].id}")
    assert response.status_code == 401 and response.json()["error"]


def test_blocked_and_muted_people_are_not_suggested(people):
    bob = client_of(people["bob"])
    bob.post(f"/api/v1/accounts/{people['frank'].id}/mute")
    client_of(people["gina"]).post(f"/api/v1/accounts/{people['bob'].id}/block")
    assert not {"frank", "gina"} & set(names(bob.get("/api/v2/suggestions").json()))


@pytest.mark.single_server
def test_suggestions_cost_two_round_trips(people):
    bob = client_of(people["bob"])
    bob.delete(f"/api/v1/suggestions/{people['frank'].id}")
    for path in ("/api/v2/suggestions", "/api/v1/suggestions"):
        bob.get(path)  # warm: connections, scripts
        with RoundTripCounter() as counter:
            assert bob.get(path).status_code == 200
        assert counter.count == 2, path


def test_the_v2_path_dismisses_nothing_as_on_mastodon(people, r):
    """Mastodon routes the dismissal under v1 only (`config/routes/api.rb`: v2's
    `suggestions` is `only: [:index]`, though its v2 controller has a `destroy`):
    `DELETE /api/v2/suggestions/:id` is its JSON 404, and nobody is dismissed."""
    bob = client_of(people["bob"])
    erin = people["erin"]
    response = bob.delete(f"/api/v2/suggestions/{erin.id}")
    assert response.status_code == 404
    assert "error" in response.json()
    assert "erin" in names(bob.get("/api/v2/suggestions").json())
    assert r.zcard(keys.suggestions_dismissed(people["bob"].id)) == 0
