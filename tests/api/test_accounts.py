"""The client API's accounts and follow graph: update_credentials, accounts by id
and by name, followers and following, follow and unfollow, relationships, search."""

from __future__ import annotations

import io
import re

import pytest
from django.test import Client
from PIL import Image

from accounts.selectors import user_get
from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs, status_ids
from tests.roundtrips import RoundTripCounter
from timeline import blocks, privacy, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_FOLLOW = "off"


def client_of(user, scopes=("read", "write", "follow", "push")):
    return api_client(token_for(user, scopes=scopes))


RELATIONSHIP_KEYS = {
    "id",
    "following",
    "showing_reblogs",
    "notifying",
    "languages",
    "followed_by",
    "blocking",
    "blocked_by",
    "muting",
    "muting_notifications",
    "requested",
    "requested_by",
    "domain_blocking",
    "endorsed",
    "note",
}


def links(response) -> dict[str, str]:
    """The `Link` header's URLs by rel."""
    return {
        rel: url
        for url, rel in re.findall(r'<([^>]+)>; rel="(\w+)"', response.get("Link", ""))
    }


def fetch(url: str):
    """What a client gets at an absolute URL the API gave."""
    assert url.startswith("http://testserver/")
    return Client().get(url.removeprefix("http://testserver"))


# avatars


def test_an_account_without_an_upload_has_a_png_avatar_clients_can_draw():
    """Mastodon clients draw avatars with raster decoders only (Tusky's Glide, UIKit
    apps): an SVG showed blank. `avatar` and `avatar_static` name the generated
    avatar as a still PNG, for oneself and for others, signed in or not."""
    alice, bob = make_user("alice"), make_user("bob")
    shown = [
        client_of(alice).get("/api/v1/accounts/verify_credentials").json(),
        client_of(alice).get(f"/api/v1/accounts/{bob.id}").json(),
        api_client().get(f"/api/v1/accounts/{alice.id}").json(),
    ]
    for account in shown:
        assert account["avatar_static"] == account["avatar"]
        response = fetch(account["avatar"])
        assert response.status_code == 200, account["avatar"]
        assert response["Content-Type"] == "image/png"
        with Image.open(io.BytesIO(response.content), formats=["PNG"]) as image:
            assert image.size == (392, 392)
    assert shown[1]["avatar"] != shown[2]["avatar"]


def test_an_uploaded_avatar_keeps_its_own_url():
    alice = make_user("alice")
    upload = io.BytesIO()
    Image.new("RGB", (300, 200), (0, 90, 200)).save(upload, format="PNG")
    upload.seek(0)
    upload.name = "me.png"
    web = logged_in_client("alice")
    assert web.post("/settings/avatar/", {"avatar": upload}).status_code == 302
    version = user_get(uid=alice.id).avatar
    account = client_of(alice).get("/api/v1/accounts/verify_credentials").json()
    assert account["avatar"] == f"http://testserver/avatars/{alice.id}/{version}/"
    assert account["avatar_static"] == account["avatar"]
    response = fetch(account["avatar"])
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"


# update_credentials


def test_update_credentials_changes_name_bio_and_privacy():
    alice = make_user("alice")
    api = client_of(alice)
    response = api.patch(
        "/api/v1/accounts/update_credentials",
        "display_name=Alice+A.&note=Hello+%3Cworld%3E&locked=1",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["display_name"] == "Alice A."
    assert data["note"] == "<p>Hello &lt;world&gt;</p>"
    assert data["source"]["note"] == "Hello <world>"
    assert data["locked"] is True
    assert data["source"]["privacy"] == "private"
    stored = user_get(uid=alice.id)
    assert (stored.name, stored.bio, stored.private) == (
        "Alice A.",
        "Hello <world>",
        True,
    )
    # The site's profile shows the new name.
    assert "Alice A." in page(logged_in_client("alice"), "/u/alice/")


def test_update_credentials_takes_json_and_multipart_and_keeps_what_is_not_sent():
    alice = make_user("alice")
    api = client_of(alice)
    assert (
        api.patch(
            "/api/v1/accounts/update_credentials",
            {"display_name": "Al", "note": "bio"},
            content_type="application/json",
        ).status_code
        == 200
    )
    response = api.generic(
        "PATCH",
        "/api/v1/accounts/update_credentials",
        b"--XX\r\n"
        b'Content-Disposition: form-data; name="note"\r\n\r\n'
        b"new bio\r\n--XX--\r\n",
        content_type="multipart/form-data; boundary=XX",
    )
    assert response.status_code == 200, response.content
    data = response.json()
    assert (data["display_name"], data["source"]["note"]) == ("Al", "new bio")
    assert data["locked"] is False
    # Public again with a false `locked`.
    api.patch(
        "/api/v1/accounts/update_credentials",
        {"locked": True},
        content_type="application/json",
    )
    again = api.patch(
        "/api/v1/accounts/update_credentials",
        {"locked": "false"},
        content_type="application/json",
    ).json()
    assert again["locked"] is False


def test_update_credentials_refusal_writes_nothing():
    alice = make_user("alice")
    api = client_of(alice)
    response = api.patch(
        "/api/v1/accounts/update_credentials",
        {"display_name": "ok", "note": "x" * 301, "locked": True},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert response.json()["error"].startswith("Validation failed: A bio is at most")
    stored = user_get(uid=alice.id)
    assert (stored.name, stored.bio, stored.private) == ("", "", False)
    response = api.patch(
        "/api/v1/accounts/update_credentials",
        {"display_name": "\u200b"},
        content_type="application/json",
    )
    assert response.status_code == 422
    assert user_get(uid=alice.id).name == ""


def _multipart(*parts: tuple[str, str | None, bytes]) -> bytes:
    """A multipart body: (field name, file name or None, content) each."""
    out = b""
    for name, filename, content in parts:
        disposition = f'form-data; name="{name}"'
        if filename:
            disposition += f'; filename="{filename}"'
        out += f"--XX\r\nContent-Disposition: {disposition}\r\n".encode()
        if filename:
            out += b"Content-Type: application/octet-stream\r\n"
        out += b"\r\n" + content + b"\r\n"
    return out + b"--XX--\r\n"


def _png(color=(200, 30, 30), size=(64, 40)) -> bytes:
    from io import BytesIO

    from PIL import Image

    buffer = BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return buffer.getvalue()


def test_update_credentials_sets_the_avatar_a_client_uploads():
    """`avatar` (a multipart file) changes the avatar, as the settings page's upload
    does: a client's "change picture" answered 200 and changed nothing (found by
    exploratory testing). A refused image is a 422 that writes nothing, the
    name sent with it included; a header, which the site has none of, is a 422."""
    alice = make_user("alice")
    api = client_of(alice)

    def patch(*parts):
        return api.generic(
            "PATCH",
            "/api/v1/accounts/update_credentials",
            _multipart(*parts),
            content_type="multipart/form-data; boundary=XX",
        )

    before = api.get("/api/v1/accounts/verify_credentials").json()["avatar"]
    response = patch(("display_name", None, b"Al"), ("avatar", "me.png", _png()))
    assert response.status_code == 200, response.content
    data = response.json()
    assert data["display_name"] == "Al"
    assert data["avatar"] != before and data["avatar"] == data["avatar_static"]
    served = api_client().get(data["avatar"].removeprefix("http://testserver"))
    assert served.status_code == 200
    assert served["Content-Type"] in ("image/png", "image/jpeg", "image/webp")
    assert user_get(uid=alice.id).avatar
    # Not an image: 422, and neither the avatar nor the name changes.
    refused = patch(("display_name", None, b"Bo"), ("avatar", "x.png", b"not an image"))
    assert refused.status_code == 422
    assert refused.json()["error"].startswith("Validation failed:")
    now = api.get("/api/v1/accounts/verify_credentials").json()
    assert (now["display_name"], now["avatar"]) == ("Al", data["avatar"])
    header = patch(("header", "h.png", _png()))
    assert header.status_code == 422
    assert "header" in header.json()["error"]
    broken = api.generic(
        "PATCH",
        "/api/v1/accounts/update_credentials",
        b"--XX\r\nnot a part",
        content_type="multipart/form-data",  # no boundary
    )
    assert broken.status_code == 400
    assert broken.json() == {"error": "The request body is not valid multipart"}
    posted = api.generic(
        "POST",
        "/api/v1/statuses",
        b"--XX\r\nnot a part",
        content_type="multipart/form-data",
    )
    assert posted.status_code == 400
    assert posted.json() == {"error": "The request body is not valid multipart"}


def test_update_credentials_needs_write_accounts():
    alice = make_user("alice")
    api = client_of(alice, scopes=("read",))
    response = api.patch(
        "/api/v1/accounts/update_credentials",
        {"display_name": "x"},
        content_type="application/json",
    )
    assert response.status_code == 403
    assert user_get(uid=alice.id).name == ""
    assert api_client().patch("/api/v1/accounts/update_credentials").status_code == 401


# accounts by id and name


def test_account_by_id_shows_counts_and_unknown_ids_are_404():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.status_create(author=alice, text="hi")
    response = api_client().get(f"/api/v1/accounts/{alice.id}")
    assert response.status_code == 200
    data = response.json()
    assert data["id"] == str(alice.id) and data["acct"] == "alice"
    assert (data["followers_count"], data["statuses_count"]) == (1, 1)
    missing = api_client().get("/api/v1/accounts/999999")
    assert missing.status_code == 404
    assert missing.json() == {"error": "Record not found"}


def test_an_account_that_blocks_the_viewer_is_still_shown():
    alice, bob = make_user("alice"), make_user("bob")
    from timeline import blocks

    blocks.block_create(blocker=alice, blocked_id=bob.id)
    response = client_of(bob).get(f"/api/v1/accounts/{alice.id}")
    assert response.status_code == 200
    assert response.json()["username"] == "alice"


def test_deleted_account_is_404():
    alice = make_user("alice")
    services.account_close(user=alice)
    assert api_client().get(f"/api/v1/accounts/{alice.id}").status_code == 404


def test_lookup_by_name_and_by_name_at_our_host():
    alice = make_user("alice")
    for acct in ("alice", "ALICE", "@alice", "alice@testserver"):
        response = api_client().get("/api/v1/accounts/lookup", {"acct": acct})
        assert response.status_code == 200, acct
        assert response.json()["id"] == str(alice.id)
    for acct in ("alice@elsewhere.example", "nobody", ""):
        response = api_client().get("/api/v1/accounts/lookup", {"acct": acct})
        assert response.status_code == 404, acct


# followers and following


def test_followers_newest_first_paged_with_link_headers():
    alice = make_user("alice")
    followers = [make_user(f"fan{i}") for i in range(5)]
    for fan in followers:
        services.follow_create(follower=fan, followee_id=alice.id)
    api = api_client()
    url = f"/api/v1/accounts/{alice.id}/followers"
    first = api.get(url, {"limit": 2})
    assert first.status_code == 200
    assert [a["username"] for a in first.json()] == ["fan4", "fan3"]
    found = links(first)
    assert set(found) == {"next", "prev"}
    assert found["next"].startswith(f"http://testserver{url}?limit=2&max_id=")
    second = api.get(found["next"])
    assert [a["username"] for a in second.json()] == ["fan2", "fan1"]
    third = api.get(links(second)["next"])
    assert [a["username"] for a in third.json()] == ["fan0"]
    assert "next" not in links(third)  # a short page is the last
    # Back up from the last page: min_id gives the page just above it.
    back = api.get(links(third)["prev"])
    assert [a["username"] for a in back.json()] == ["fan2", "fan1"]
    newest = api.get(links(back)["prev"])
    assert [a["username"] for a in newest.json()] == ["fan4", "fan3"]
    # since_id: the newest page above it.
    since = api.get(url, {"limit": 2, "since_id": links(third)["prev"].split("=")[-1]})
    assert [a["username"] for a in since.json()] == ["fan4", "fan3"]
    # Past the end: an empty list and no Link header.
    empty = api.get(links(newest)["prev"])
    assert empty.json() == [] and "Link" not in empty
    following = api.get(f"/api/v1/accounts/{followers[0].id}/following").json()
    assert [a["username"] for a in following] == ["alice"]


def test_followers_limit_default_40_max_80():
    alice = make_user("alice")
    for i in range(85):
        fan = make_user(f"fan{i}")
        services.follow_create(follower=fan, followee_id=alice.id)
    url = f"/api/v1/accounts/{alice.id}/followers"
    assert len(api_client().get(url).json()) == 40
    assert len(api_client().get(url, {"limit": 500}).json()) == 80


def test_private_account_lists_only_for_owner_and_approved_followers():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=carol, followee_id=alice.id)
    from timeline import privacy

    privacy.account_privacy_set(user=alice, private=True)
    url = f"/api/v1/accounts/{alice.id}/followers"
    assert api_client().get(url).json() == []
    assert client_of(bob).get(url).json() == []
    assert [a["username"] for a in client_of(carol).get(url).json()] == ["carol"]
    assert [a["username"] for a in client_of(alice).get(url).json()] == ["carol"]
    # As the site's page: nobody listed to a stranger.
    assert "carol" not in page(logged_in_client("bob"), "/u/alice/followers/")
    assert api_client().get("/api/v1/accounts/999999/followers").status_code == 404


# follow, unfollow, relationships


def test_follow_returns_relationship_and_the_site_shows_it():
    alice, bob = make_user("alice"), make_user("bob")
    sid = services.status_create(author=bob, text="from bob").id
    response = client_of(alice).post(
        f"/api/v1/accounts/{bob.id}/follow",
        "reblogs=1&notify=0",
        content_type="application/x-www-form-urlencoded",
    )
    assert response.status_code == 200, response.content
    data = response.json()
    assert set(data) == RELATIONSHIP_KEYS
    assert data["id"] == str(bob.id)
    assert (data["following"], data["requested"], data["followed_by"]) == (
        True,
        False,
        False,
    )
    assert data["showing_reblogs"] is True and data["note"] == ""
    run_jobs()
    site = logged_in_client("alice")
    assert sid in status_ids(page(site, "/"))
    assert "Unfollow" in page(site, "/u/bob/")
    # Unfollow: gone from the home and the relationship.
    unfollowed = client_of(alice).post(f"/api/v1/accounts/{bob.id}/unfollow")
    assert unfollowed.status_code == 200
    assert unfollowed.json()["following"] is False
    run_jobs()
    assert sid not in status_ids(page(site, "/"))


def test_follow_of_a_private_account_is_a_request_until_authorized():
    alice, bob = make_user("alice"), make_user("bob")
    from timeline import privacy

    privacy.account_privacy_set(user=bob, private=True)
    data = client_of(alice).post(f"/api/v1/accounts/{bob.id}/follow").json()
    assert (data["following"], data["requested"]) == (False, True)
    seen_by_bob = (
        client_of(bob).get("/api/v1/accounts/relationships", {"id": alice.id}).json()
    )
    assert seen_by_bob[0]["requested_by"] is True
    own = client_of(bob).get("/api/v1/accounts/verify_credentials").json()
    assert own["source"]["follow_requests_count"] == 1
    authorized = client_of(bob).post(f"/api/v1/follow_requests/{alice.id}/authorize")
    assert authorized.status_code == 200
    assert authorized.json()["followed_by"] is True
    assert authorized.json()["requested_by"] is False
    now = client_of(alice).get("/api/v1/accounts/relationships", {"id[]": bob.id})
    assert (now.json()[0]["following"], now.json()[0]["requested"]) == (True, False)


def test_unfollow_cancels_a_pending_request():
    alice, bob = make_user("alice"), make_user("bob")
    from timeline import privacy

    privacy.account_privacy_set(user=bob, private=True)
    client_of(alice).post(f"/api/v1/accounts/{bob.id}/follow")
    data = client_of(alice).post(f"/api/v1/accounts/{bob.id}/unfollow").json()
    assert (data["following"], data["requested"]) == (False, False)
    assert client_of(bob).get("/api/v1/follow_requests").json() == []


def test_follow_codes_unknown_self_and_scope():
    alice = make_user("alice")
    api = client_of(alice)
    assert api.post("/api/v1/accounts/999999/follow").status_code == 404
    assert api.post(f"/api/v1/accounts/{alice.id}/follow").status_code == 404
    assert api.post("/api/v1/accounts/999999/unfollow").status_code == 404
    bob = make_user("bob")
    read_only = client_of(alice, scopes=("read",))
    assert read_only.post(f"/api/v1/accounts/{bob.id}/follow").status_code == 403
    # The old `follow` scope covers the follow graph.
    follow_only = client_of(alice, scopes=("follow",))
    assert follow_only.post(f"/api/v1/accounts/{bob.id}/follow").status_code == 200
    assert api_client().post(f"/api/v1/accounts/{bob.id}/follow").status_code == 401


def test_follow_answers_429_past_the_follow_budget(settings):
    settings.RATE_LIMIT_FOLLOW = "1/1h"
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    api = client_of(alice)
    assert api.post(f"/api/v1/accounts/{bob.id}/follow").status_code == 200
    refused = api.post(f"/api/v1/accounts/{carol.id}/follow")
    assert refused.status_code == 429
    assert refused.json() == {"error": "Too many requests"}


def test_relationships_in_order_asked_unknown_left_out():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    services.follow_create(follower=bob, followee_id=alice.id)
    services.follow_create(follower=alice, followee_id=carol.id)
    response = client_of(alice).get(
        f"/api/v1/accounts/relationships?id[]={carol.id}&id[]=999999&id[]={bob.id}"
    )
    assert response.status_code == 200
    data = response.json()
    assert [r["id"] for r in data] == [str(carol.id), str(bob.id)]
    assert (data[0]["following"], data[0]["followed_by"]) == (True, False)
    assert (data[1]["following"], data[1]["followed_by"]) == (False, True)
    assert all(set(r) == RELATIONSHIP_KEYS for r in data)
    assert client_of(alice).get("/api/v1/accounts/relationships").json() == []
    assert api_client().get("/api/v1/accounts/relationships").status_code == 401


# familiar followers


def familiar(client, *uids) -> list[tuple[str, list[str]]]:
    query = "&".join(f"id[]={uid}" for uid in uids)
    response = client.get(f"/api/v1/accounts/familiar_followers?{query}")
    assert response.status_code == 200, response.content
    return [
        (e["id"], sorted(a["acct"] for a in e["accounts"])) for e in response.json()
    ]


@pytest.mark.real_redis
def test_familiar_followers_are_whom_you_follow_who_follow_them(redis_backend):
    """Mastodon's familiar followers, as the profile's "followed by N people you
    follow": for each account asked, in the order asked, the people the viewer
    follows who follow it, as Accounts; unknown ids left out."""
    alice, bob, carol, dave, erin = (
        make_user(n) for n in ("alice", "bob", "carol", "dave", "erin")
    )
    for followee in (bob, carol, dave):
        services.follow_create(follower=alice, followee_id=followee.id)
    for follower in (bob, carol, erin):  # erin: not followed by alice
        services.follow_create(follower=follower, followee_id=dave.id)
    services.follow_create(follower=bob, followee_id=erin.id)
    run_jobs()
    api = client_of(alice)
    assert familiar(api, dave.id, 999999, erin.id, alice.id) == [
        (str(dave.id), ["bob", "carol"]),
        (str(erin.id), ["bob"]),
        (str(alice.id), []),  # yourself: nobody is "familiar"
    ]
    response = api.get(f"/api/v1/accounts/familiar_followers?id[]={dave.id}")
    (entry,) = response.json()
    assert set(entry["accounts"][0]) >= {"id", "acct", "followers_count", "avatar"}
    api.get(f"/api/v1/accounts/familiar_followers?id[]={dave.id}&id[]={erin.id}")
    with RoundTripCounter() as counter:
        familiar(api, dave.id, erin.id)
    # The people in common with the auth check, then their accounts; on a Cluster
    # the viewer's follows are read first, then checked in each account's slot.
    assert counter.count == (2 if redis_backend == "real" else 3)
    assert client_of(alice).get("/api/v1/accounts/familiar_followers").json() == []
    anonymous = api_client().get(f"/api/v1/accounts/familiar_followers?id[]={dave.id}")
    assert anonymous.status_code == 401


def test_familiar_followers_of_a_private_or_blocked_account_are_not_told():
    """Who follows a private account is its own to show (its followers list is
    hidden the same way), and nothing is told across a block."""
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    services.follow_create(follower=alice, followee_id=bob.id)
    services.follow_create(follower=bob, followee_id=carol.id)
    services.follow_create(follower=bob, followee_id=dave.id)
    run_jobs()
    api = client_of(alice)
    assert familiar(api, carol.id, dave.id) == [
        (str(carol.id), ["bob"]),
        (str(dave.id), ["bob"]),
    ]
    privacy.account_privacy_set(user=carol, private=True)
    blocks.block_create(blocker=dave, blocked_id=alice.id)
    run_jobs()
    assert familiar(api, carol.id, dave.id) == [(str(carol.id), []), (str(dave.id), [])]
    scoped = client_of(alice, scopes=("read:accounts",))
    missing = scoped.get(f"/api/v1/accounts/familiar_followers?id[]={dave.id}")
    assert missing.status_code == 403


# search


def test_search_by_prefix_at_name_and_name_at_host():
    alice, _ = make_user("alice"), make_user("alfred")
    make_user("bob")
    api = client_of(alice)
    found = api.get(
        "/api/v1/accounts/search", {"q": "al", "following": 0, "resolve": 0}
    ).json()
    assert sorted(a["username"] for a in found) == ["alfred", "alice"]
    for q in ("@bob", "bob@testserver", "BO"):
        assert [
            a["username"] for a in api.get("/api/v1/accounts/search", {"q": q}).json()
        ] == ["bob"], q
    assert api.get("/api/v1/accounts/search", {"q": "bob@elsewhere"}).json() == []
    assert api.get("/api/v1/accounts/search", {"q": ""}).json() == []
    one = api.get("/api/v1/accounts/search", {"q": "al", "limit": 1}).json()
    other = api.get(
        "/api/v1/accounts/search", {"q": "al", "limit": 1, "offset": 1}
    ).json()
    assert len(one) == len(other) == 1 and one[0]["id"] != other[0]["id"]
    assert api.get("/api/v1/accounts/search", {"q": "al", "offset": 2}).json() == []
    assert api_client().get("/api/v1/accounts/search", {"q": "al"}).status_code == 401


def test_search_following_only_and_never_someone_blocked():
    alice, alfred, albert = make_user("alice"), make_user("alfred"), make_user("albert")
    services.follow_create(follower=alice, followee_id=alfred.id)
    api = client_of(alice)
    found = api.get("/api/v1/accounts/search", {"q": "al", "following": "true"}).json()
    assert [a["username"] for a in found] == ["alfred"]
    from timeline import blocks

    blocks.block_create(blocker=albert, blocked_id=alice.id)
    found = api.get("/api/v1/accounts/search", {"q": "al"}).json()
    assert "albert" not in [a["username"] for a in found]


# round trips


def count_round_trips(api, url: str, data=None) -> int:
    api.get(url, data)  # warm: connections open, scripts loaded, names remembered
    with RoundTripCounter() as counter:
        response = api.get(url, data)
        assert response.status_code == 200, response.content
    assert counter.most_per_node <= 1
    return counter.count


@pytest.mark.real_redis
def test_account_reads_cost_at_most_two_round_trips():
    alice = make_user("alice")
    for i in range(5):
        fan = make_user(f"fan{i}")
        services.follow_create(follower=fan, followee_id=alice.id)
    api = client_of(alice)
    assert count_round_trips(api, "/api/v1/accounts/verify_credentials") == 1
    assert count_round_trips(api, f"/api/v1/accounts/{alice.id}") == 1
    assert count_round_trips(api, "/api/v1/accounts/lookup", {"acct": "alice"}) == 1
    assert count_round_trips(api, f"/api/v1/accounts/{alice.id}/followers") == 2
    ids = "&".join(f"id[]={uid}" for uid in range(1, 7))
    assert count_round_trips(api, f"/api/v1/accounts/relationships?{ids}") == 1
    # Search: the index with the auth check, the people, their counts.
    assert count_round_trips(api, "/api/v1/accounts/search", {"q": "fan"}) == 3
