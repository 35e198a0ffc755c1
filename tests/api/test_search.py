"""The client API's search (accounts and hashtags), tags and trending tags."""

from __future__ import annotations

import pytest

from accounts import services as account_services
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import blocks, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    found = {name: make_user(name) for name in ("alice", "albert", "bob", "alfred")}
    account_services.profile_update(user=found["bob"], name="Alan Bobson", bio="")
    return found


def search(client, query: str) -> dict:
    response = client.get("/api/v2/search" + query)
    assert response.status_code == 200, response.content
    return response.json()


def names(found: dict) -> list[str]:
    return sorted(a["username"] for a in found["accounts"])


def post_tagged(author, *texts) -> None:
    for text in texts:
        services.status_create(author=author, text=text)
    run_jobs()


def test_accounts_are_found_by_name_prefix(people):
    client = api_client(token_for(people["alice"]))
    found = search(client, "?q=al")
    assert names(found) == ["albert", "alfred", "alice", "bob"]  # Alan Bobson too
    assert found["statuses"] == []
    albert = next(a for a in found["accounts"] if a["username"] == "albert")
    assert albert["id"] == str(people["albert"].id)
    assert albert["followers_count"] == 0
    assert names(search(client, "?q=%40alf")) == ["alfred"]
    assert len(search(client, "?q=al&limit=2")["accounts"]) == 2
    rest = search(client, "?q=al&type=accounts&limit=2&offset=2")
    assert len(rest["accounts"]) == 2
    assert rest["hashtags"] == []
    # Mastodon.py's own parameters are accepted and ignored.
    assert names(search(client, "?q=alb&resolve=1&exclude_unreviewed=1")) == ["albert"]


@pytest.mark.parametrize("query", ["alice@testserver", "@alice@testserver"])
def test_v2_search_finds_a_local_account_by_its_full_handle(people, query):
    """A client that searches for a handle it was given whole (`@alice@host`, as
    Ice Cubes and Tusky do before following) finds her, as
    `/api/v1/accounts/search` does; another host's handle finds nobody."""
    client = api_client(token_for(people["bob"]))
    params = {"q": query, "type": "accounts", "resolve": "true"}
    found = client.get("/api/v2/search", params).json()
    assert [a["id"] for a in found["accounts"]] == [str(people["alice"].id)]
    elsewhere = {**params, "q": query.replace("testserver", "example.com")}
    assert client.get("/api/v2/search", elsewhere).json()["accounts"] == []


def test_search_leaves_out_the_blocked_and_can_ask_for_followees(people):
    alice = people["alice"]
    blocks.block_create(blocker=people["alfred"], blocked_id=alice.id)
    services.follow_create(follower=alice, followee_id=people["albert"].id)
    run_jobs()
    client = api_client(token_for(alice))
    assert names(search(client, "?q=al")) == ["albert", "alice", "bob"]
    assert names(search(client, "?q=al&following=1")) == ["albert"]
    assert names(search(client, "?q=al&following=0")) == ["albert", "alice", "bob"]


def test_hashtags_are_the_tag_itself_and_trending_ones_with_the_prefix(people):
    alice = people["alice"]
    post_tagged(alice, "I like #python", "#pythonista here", "#pythonic code", "#rust")
    client = api_client(token_for(alice))
    found = search(client, "?q=%23python&type=hashtags")
    tags = [t["name"] for t in found["hashtags"]]
    assert tags[0] == "python"  # the tag itself first
    assert sorted(tags) == ["python", "pythonic", "pythonista"]
    assert found["accounts"] == []
    tag = found["hashtags"][0]
    assert tag["url"] == "http://testserver/tags/python/"
    (today,) = tag["history"]
    assert today["uses"] == "1"
    assert isinstance(today["day"], str)
    # A tag that no public status carries is not found; nor statuses ever.
    assert search(client, "?q=nothinghere")["hashtags"] == []
    both = search(client, "?q=rust")
    assert [t["name"] for t in both["hashtags"]] == ["rust"]


def test_a_tag_and_the_trending_tags(people):
    alice = people["alice"]
    post_tagged(alice, "#Django one", "#django two", "#redis three")
    client = api_client()
    tag = client.get("/api/v1/tags/Django")
    assert tag.status_code == 200
    assert tag.json()["name"] == "django"
    assert tag.json()["history"][0]["uses"] == "2"
    assert client.get("/api/v1/tags/nosuchtag").status_code == 404
    assert client.get("/api/v1/tags/123").status_code == 404
    trends = client.get("/api/v1/trends/tags")
    assert trends.status_code == 200
    assert [t["name"] for t in trends.json()] == ["django", "redis"]
    assert [t["name"] for t in client.get("/api/v1/trends/tags?limit=1").json()] == [
        "django"
    ]


def test_search_asks_for_q_and_a_token_to_resolve(people):
    client = api_client(token_for(people["alice"]))
    missing = client.get("/api/v2/search")
    assert missing.status_code == 400
    assert missing.json() == {"error": "param is missing or the value is empty: q"}
    anonymous = api_client()
    assert names(search(anonymous, "?q=alb")) == ["albert"]
    assert anonymous.get("/api/v2/search?q=alb&resolve=true").status_code == 401
    assert anonymous.get("/api/v2/search?q=alb&offset=1").status_code == 401
    assert client.get("/api/v2/search?q=al&offset=-1").status_code == 400
    # A negative limit counts as its absolute value, as Mastodon's `limit_param`.
    assert len(client.get("/api/v2/search?q=al&limit=-2").json()["accounts"]) == 2
    no_scope = api_client(token_for(people["alice"], scopes=("write",)))
    assert no_scope.get("/api/v2/search?q=al").status_code == 403


@pytest.mark.real_redis
def test_search_costs_three_round_trips(people):
    post_tagged(people["alice"], "#alpha and #alps")
    client = api_client(token_for(people["alice"]))
    client.get("/api/v2/search?q=al")
    with RoundTripCounter() as counter:
        found = search(client, "?q=al")
    assert counter.most_per_node <= 1
    assert counter.count == 3
    assert len(found["accounts"]) == 4
    assert sorted(t["name"] for t in found["hashtags"]) == ["alpha", "alps"]


def test_resolve_finds_what_a_link_to_this_site_shows(people):
    """`resolve=true` with a link to this site answers what the link shows, as
    Mastodon resolves its local URLs: how a client opens a profile, status or tag
    link inside the app (found by exploratory testing: every list was empty).
    What the viewer may not see stays unfound, as its page would be a 404."""
    from urllib.parse import quote

    alice, bob = people["alice"], people["bob"]
    sid = services.status_create(author=bob, text="see #redis here").id
    run_jobs()
    client = api_client(token_for(alice))

    def resolved(url: str, **more) -> dict:
        extra = "".join(f"&{k}={v}" for k, v in more.items())
        return search(client, f"?q={quote(url, safe='')}&resolve=true{extra}")

    found = resolved("http://testserver/u/Bob/")
    assert [a["username"] for a in found["accounts"]] == ["bob"]
    bare = resolved("http://testserver/u/bob")  # without the slash the site adds
    assert [a["username"] for a in bare["accounts"]] == ["bob"]
    assert [s["id"] for s in resolved(f"http://testserver/s/{sid}")["statuses"]] == [
        str(sid)
    ]
    assert found["statuses"] == [] and found["hashtags"] == []
    found = resolved(f"http://testserver/s/{sid}/")
    assert [s["id"] for s in found["statuses"]] == [str(sid)]
    assert found["accounts"] == []
    assert [
        t["name"] for t in resolved("http://testserver/tags/redis/")["hashtags"]
    ] == ["redis"]
    # Asked for another type, or another host, or a page that is not one of these.
    assert resolved(f"http://testserver/s/{sid}/", type="accounts")["statuses"] == []
    for url in (
        "http://elsewhere.example/u/bob/",
        "http://testserver/u/nobody/",
        "http://testserver/s/999999/",
        "http://testserver/settings/",
    ):
        assert resolved(url) == {"accounts": [], "statuses": [], "hashtags": []}, url
    # A private author's status, for a non-follower: not found.
    from timeline import privacy

    privacy.account_privacy_set(user=bob, private=True)
    assert resolved(f"http://testserver/s/{sid}/")["statuses"] == []
    # Without resolve, a link is searched as text (Mastodon's url_query? needs it).
    plain = search(client, f"?q={quote('http://testserver/u/bob/', safe='')}")
    assert plain["accounts"] == []
