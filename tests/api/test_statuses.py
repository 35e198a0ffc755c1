"""Statuses through the client API: post, show, delete, threads, likes, reposts."""

from __future__ import annotations

import re
import threading
import time

import pytest
from django.test import Client

from accounts.selectors import user_get
from api import keys as api_keys
from config.redis import get_redis
from tests.api.helpers import api_client, token_for
from tests.helpers import (
    PASSWORD,
    logged_in_client,
    make_user,
    page,
    run_jobs,
    status_ids,
)
from tests.roundtrips import RoundTripCounter
from timeline import blocks, keys, privacy, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"


def _api(user):
    return api_client(token_for(user))


def _post(client, text, **more):
    response = client.post("/api/v1/statuses", {"status": text, **more})
    assert response.status_code == 200, response.content
    return response.json()


def _follow(follower, followee):
    services.follow_create(follower=follower, followee_id=followee.id)
    run_jobs()


def test_a_post_is_a_status_with_escaped_html_mentions_and_tags():
    alice, bob = make_user("alice"), make_user("bob")
    data = _post(_api(alice), "Hi @bob <b>x</b> & #Django")
    assert data["id"].isdigit()
    assert data["account"]["id"] == str(alice.id)
    assert data["account"]["acct"] == "alice"
    assert data["account"]["statuses_count"] == 1
    assert "&lt;b&gt;x&lt;/b&gt; &amp;" in data["content"]
    assert "<b>" not in data["content"]
    assert data["mentions"] == [
        {
            "id": str(bob.id),
            "username": "bob",
            "acct": "bob",
            "url": "http://testserver/u/bob/",
        }
    ]
    assert [t["name"] for t in data["tags"]] == ["django"]
    assert data["visibility"] == "public"
    assert data["reblog"] is None and data["in_reply_to_id"] is None
    assert (data["favourites_count"], data["reblogs_count"]) == (0, 0)
    assert data["favourited"] is False and data["reblogged"] is False


def test_a_mention_names_the_account_as_its_account_entity_does():
    """A client shows a mention as the account's own name (`@Alice`, not the
    lowercase the site stores a mention in) and opens her profile from it: the
    Mention says what her Account says."""
    alice, bob = make_user("Alice"), make_user("bob")
    status = _post(_api(bob), "hi @ALICE")
    account = _api(bob).get(f"/api/v1/accounts/{alice.id}").json()
    (mention,) = status["mentions"]
    assert mention["id"] == account["id"]
    assert mention["username"] == account["username"] == "Alice"
    assert mention["acct"] == account["acct"] == "Alice"
    assert mention["url"] == account["url"]


def test_a_reposted_statuss_mentions_name_the_accounts_wherever_it_shows():
    """A repost's original mentions someone who has nothing else on the page: in
    the reposter's answer, a follower's home, the reposter's profile and read by
    id, the Mention still names her as her Account does; once her
    account is deleted, the mention is left out (as Mastodon drops a deleted
    account's mentions)."""
    alice, bob, carol = make_user("Alice"), make_user("bob"), make_user("carol")
    dave = make_user("dave")
    _follow(dave, bob)
    sid = _post(_api(carol), "hello @alice")["id"]
    wrapper = _api(bob).post(f"/api/v1/statuses/{sid}/reblog").json()
    run_jobs()
    home = _api(dave).get("/api/v1/timelines/home").json()
    profile = api_client().get(f"/api/v1/accounts/{bob.id}/statuses").json()
    shown = [
        wrapper["reblog"],
        next(s["reblog"] for s in home if s["id"] == wrapper["id"]),
        next(s["reblog"] for s in profile if s["id"] == wrapper["id"]),
        api_client().get(f"/api/v1/statuses/{wrapper['id']}").json()["reblog"],
        api_client().get(f"/api/v1/statuses/{sid}").json(),
    ]
    for original in shown:
        assert [(m["id"], m["username"]) for m in original["mentions"]] == [
            (str(alice.id), "Alice")
        ]
    account_services_delete(alice)
    run_jobs()
    assert api_client().get(f"/api/v1/statuses/{sid}").json()["mentions"] == []


def test_a_post_reaches_a_followers_html_home_after_the_jobs():
    alice, bob = make_user("alice"), make_user("bob")
    _follow(bob, alice)
    data = _post(_api(alice), "from an app")
    run_jobs()
    assert int(data["id"]) in status_ids(page(logged_in_client("bob"), "/"))


def test_text_errors_are_422_in_mastodons_words(settings):
    client = _api(make_user("alice"))
    response = client.post("/api/v1/statuses", {"status": "   "})
    assert response.status_code == 422
    assert response.json() == {"error": "Validation failed: Text can't be blank"}
    long = "x" * (settings.STATUS_MAX_LENGTH + 1)
    response = client.post("/api/v1/statuses", {"status": long})
    assert response.status_code == 422
    assert response.json()["error"] == (
        f"Validation failed: Text character limit of "
        f"{settings.STATUS_MAX_LENGTH} exceeded"
    )


def test_what_cannot_be_honoured_is_refused_not_ignored():
    alice = make_user("alice")
    client = _api(alice)
    for more in (
        {"media_ids[]": "1"},
        {"visibility": "direct"},
        {"visibility": "private"},  # a public account's statuses are public
    ):
        response = client.post("/api/v1/statuses", {"status": "hi", **more})
        assert response.status_code == 422, more
        assert response.json()["error"].startswith("Validation failed: ")
    assert get_redis().zcard(keys.posts(alice.id)) == 0
    _post(client, "shown public", visibility="public", spoiler_text="")
    privacy.account_privacy_set(user=alice, private=True)
    private = _api(user_get(uid=alice.id))
    for visibility in ("private", "unlisted", "public"):
        shown = _post(private, f"mine, {visibility}", visibility=visibility)
        assert shown["visibility"] == "private"


def test_a_json_body_posts_too():
    client = _api(make_user("alice"))
    response = client.post(
        "/api/v1/statuses",
        {"status": "json", "sensitive": False},
        content_type="application/json",
    )
    assert response.status_code == 200
    assert "json" in response.json()["content"]


def test_a_json_post_with_poll_null_is_a_plain_status():
    """A JSON client that says "no poll" with `"poll": null` (and empty media)
    posts its status without one, as does an empty form field; a poll asked for
    in JSON or in a form is one (`tests/api/test_polls.py`)."""
    alice = make_user("alice")
    client = _api(alice)
    response = client.post(
        "/api/v1/statuses",
        {"status": "no poll here", "poll": None, "media_ids": [], "sensitive": False},
        content_type="application/json",
    )
    assert response.status_code == 200, response.content
    assert "no poll here" in response.json()["content"]
    assert response.json()["poll"] is None
    assert _post(client, "an empty form field", poll="")["poll"] is None
    poll = {"options": ["yes", "no"], "expires_in": 300}
    asked = client.post(
        "/api/v1/statuses",
        {"status": "a poll", "poll": poll},
        content_type="application/json",
    )
    assert asked.status_code == 200, asked.content
    assert [o["title"] for o in asked.json()["poll"]["options"]] == ["yes", "no"]
    form = {"poll[options][]": ["yes", "no"], "poll[expires_in]": "300"}
    assert _post(client, "a poll", **form)["poll"]["expires_at"]
    assert get_redis().zcard(keys.posts(alice.id)) == 4


def test_a_reply_threads_through_in_reply_to_id():
    alice, bob = make_user("alice"), make_user("bob")
    parent = _post(_api(alice), "question")
    reply = _post(_api(bob), "@alice answer", in_reply_to_id=parent["id"])
    assert reply["in_reply_to_id"] == parent["id"]
    assert reply["in_reply_to_account_id"] == str(alice.id)
    deeper = _post(_api(alice), "@bob thanks", in_reply_to_id=reply["id"])
    context = api_client().get(f"/api/v1/statuses/{reply['id']}/context").json()
    assert [s["id"] for s in context["ancestors"]] == [parent["id"]]
    assert [s["id"] for s in context["descendants"]] == [deeper["id"]]
    shown = api_client().get(f"/api/v1/statuses/{parent['id']}").json()
    assert shown["replies_count"] == 1
    # The HTML thread shows the reply too.
    assert int(reply["id"]) in status_ids(page(Client(), f"/s/{parent['id']}/"))


def test_a_reply_to_nothing_is_404():
    client = _api(make_user("alice"))
    response = client.post(
        "/api/v1/statuses", {"status": "hm", "in_reply_to_id": "99999999"}
    )
    assert response.status_code == 404
    assert "does not appear to exist" in response.json()["error"]


def test_a_repeated_idempotency_key_answers_the_first_status():
    alice = make_user("alice")
    client = Client(
        headers={
            "Authorization": f"Bearer {token_for(alice)}",
            "Idempotency-Key": "k-1",
        }
    )
    first = client.post("/api/v1/statuses", {"status": "once"}).json()
    again = client.post("/api/v1/statuses", {"status": "once"}).json()
    assert again["id"] == first["id"]
    assert get_redis().zcard(keys.posts(alice.id)) == 1
    # Another user's same key is theirs.
    bob = make_user("bob")
    other = Client(
        headers={"Authorization": f"Bearer {token_for(bob)}", "Idempotency-Key": "k-1"}
    )
    theirs = other.post("/api/v1/statuses", {"status": "once"}).json()
    assert theirs["id"] != first["id"]


def test_a_refused_post_gives_its_idempotency_key_back():
    alice = make_user("alice")
    client = Client(
        headers={"Authorization": f"Bearer {token_for(alice)}", "Idempotency-Key": "k"}
    )
    assert client.post("/api/v1/statuses", {"status": " "}).status_code == 422
    assert client.post("/api/v1/statuses", {"status": "now"}).status_code == 200


@pytest.mark.real_redis
def test_concurrent_repeats_of_a_key_make_one_status():
    alice = make_user("alice")
    token = token_for(alice)
    ids, codes = [], []

    def send():
        client = Client(
            headers={"Authorization": f"Bearer {token}", "Idempotency-Key": "race"}
        )
        response = client.post("/api/v1/statuses", {"status": "raced"})
        codes.append(response.status_code)
        if response.status_code == 200:
            ids.append(response.json()["id"])

    threads = [threading.Thread(target=send) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert set(codes) <= {200, 409}
    assert len(set(ids)) == 1
    assert get_redis().zcard(keys.posts(alice.id)) == 1


def test_delete_answers_the_source_text_and_the_status_is_gone():
    alice, bob = make_user("alice"), make_user("bob")
    data = _post(_api(alice), "bye <now>")
    assert _api(bob).delete(f"/api/v1/statuses/{data['id']}").status_code == 404
    response = _api(alice).delete(f"/api/v1/statuses/{data['id']}")
    assert response.status_code == 200
    deleted = response.json()
    assert deleted["id"] == data["id"]
    assert deleted["text"] == "bye <now>"
    assert api_client().get(f"/api/v1/statuses/{data['id']}").status_code == 404
    assert _api(alice).delete(f"/api/v1/statuses/{data['id']}").status_code == 404


def test_likes_and_reposts_change_counts_and_the_viewers_state():
    alice, bob = make_user("alice"), make_user("bob")
    data = _post(_api(alice), "likeable")
    sid = data["id"]
    bob_api = _api(bob)
    liked = bob_api.post(f"/api/v1/statuses/{sid}/favourite").json()
    assert liked["favourited"] is True and liked["favourites_count"] == 1
    wrapper = bob_api.post(f"/api/v1/statuses/{sid}/reblog").json()
    assert wrapper["reblog"]["id"] == sid
    assert wrapper["account"]["id"] == str(bob.id)
    assert wrapper["reblogged"] is True and wrapper["reblog"]["reblogs_count"] == 1
    assert wrapper["reblog"]["favourited"] is True
    again = bob_api.post(f"/api/v1/statuses/{sid}/reblog").json()
    assert again["id"] == wrapper["id"]
    # A like through the repost's id likes the original.
    seen_by_alice = _api(alice).get(f"/api/v1/statuses/{sid}").json()
    assert (seen_by_alice["favourites_count"], seen_by_alice["reblogs_count"]) == (1, 1)
    assert seen_by_alice["favourited"] is False
    by = api_client().get(f"/api/v1/statuses/{sid}/favourited_by").json()
    assert [a["id"] for a in by] == [str(bob.id)]
    by = api_client().get(f"/api/v1/statuses/{sid}/reblogged_by").json()
    assert [a["id"] for a in by] == [str(bob.id)]
    original = bob_api.post(f"/api/v1/statuses/{sid}/unreblog").json()
    assert original["id"] == sid and original["reblogged"] is False
    assert original["reblogs_count"] == 0
    unliked = bob_api.post(f"/api/v1/statuses/{sid}/unfavourite").json()
    assert unliked["favourited"] is False and unliked["favourites_count"] == 0
    assert api_client().get(f"/api/v1/statuses/{wrapper['id']}").status_code == 404


def test_a_private_authors_status_is_404_but_to_approved_followers():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs()
    alice = user_get(uid=alice.id)
    sid = _post(_api(alice), "for friends")["id"]
    services.follow_ask(follower=bob, followee_id=alice.id)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    run_jobs()
    for path in ("", "/context", "/favourited_by"):
        assert api_client().get(f"/api/v1/statuses/{sid}{path}").status_code == 404
        assert _api(carol).get(f"/api/v1/statuses/{sid}{path}").status_code == 404
        assert _api(bob).get(f"/api/v1/statuses/{sid}{path}").status_code == 200
    shown = _api(bob).get(f"/api/v1/statuses/{sid}").json()
    assert shown["visibility"] == "private"
    assert _api(carol).post(f"/api/v1/statuses/{sid}/favourite").status_code == 404
    # Visible, yet not repostable: a private account's statuses stay with it.
    assert _api(bob).post(f"/api/v1/statuses/{sid}/reblog").status_code == 403


def test_blocks_either_way_hide_a_status():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(_api(alice), "hidden from bob")["id"]
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    run_jobs()
    assert _api(bob).get(f"/api/v1/statuses/{sid}").status_code == 404
    assert _api(bob).post(f"/api/v1/statuses/{sid}/favourite").status_code == 404
    for action in ("unfavourite", "unreblog", "reblog", "context", "reblogged_by"):
        method = "get" if action in ("context", "reblogged_by") else "post"
        response = getattr(_api(bob), method)(f"/api/v1/statuses/{sid}/{action}")
        assert response.status_code == 404, action
        assert "hidden from bob" not in response.content.decode()
    bob_sid = _post(_api(bob), "by bob")["id"]
    assert _api(alice).get(f"/api/v1/statuses/{bob_sid}").status_code == 404
    assert api_client().get(f"/api/v1/statuses/{sid}").status_code == 200


def test_a_reply_to_a_hidden_status_is_404():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(_api(alice), "no replies from bob")["id"]
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    response = _api(bob).post(
        "/api/v1/statuses", {"status": "hey", "in_reply_to_id": sid}
    )
    assert response.status_code == 404


def test_writes_need_a_token_with_the_scope():
    alice = make_user("alice")
    assert api_client().post("/api/v1/statuses", {"status": "x"}).status_code == 401
    read_only = api_client(token_for(alice, scopes=("read",)))
    assert read_only.post("/api/v1/statuses", {"status": "x"}).status_code == 403


def test_account_deletion_removes_the_idempotency_keys():
    alice = make_user("alice")
    client = Client(
        headers={"Authorization": f"Bearer {token_for(alice)}", "Idempotency-Key": "k"}
    )
    assert client.post("/api/v1/statuses", {"status": "soon gone"}).status_code == 200
    assert get_redis().exists(api_keys.idempotency(alice.id))
    account_services_delete(alice)
    run_jobs()
    assert not get_redis().exists(api_keys.idempotency(alice.id))


def account_services_delete(user) -> None:
    services.account_delete(user=user, password=PASSWORD, client="127.0.0.1")


@pytest.mark.real_redis
def test_a_status_costs_three_round_trips():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(_api(alice), "counted")["id"]
    client = _api(bob)
    client.get(f"/api/v1/statuses/{sid}")
    with RoundTripCounter() as counter:
        assert client.get(f"/api/v1/statuses/{sid}").status_code == 200
    assert counter.count <= 3


def test_an_idempotency_key_whose_request_died_is_taken_over_after_a_while(
    monkeypatch,
):
    """A request that claimed a key and died before answering (a killed worker)
    does not make every retry answer 409 for an hour: past the claim's hold, a
    retry posts."""
    from api import idempotency

    alice = make_user("alice")
    now = [time.time()]
    monkeypatch.setattr(idempotency.time, "time", lambda: now[0])
    monkeypatch.setattr(idempotency.time, "sleep", lambda seconds: None)
    idempotency.claim(uid=alice.id, key="dies")  # never settled
    client = _api(alice)
    headers = {"Idempotency-Key": "dies"}
    assert (
        client.post("/api/v1/statuses", {"status": "x"}, headers=headers).status_code
        == 409
    )
    now[0] += idempotency.CLAIM_HOLD_SECONDS + 1
    retried = client.post("/api/v1/statuses", {"status": "x"}, headers=headers)
    assert retried.status_code == 200
    again = client.post("/api/v1/statuses", {"status": "x"}, headers=headers)
    assert again.json()["id"] == retried.json()["id"]


def test_who_favourited_honours_limit_and_links_every_page_once():
    """`limit` (Mastodon's: 40, at most 80) sizes the pages of who liked a status,
    and the Link header walks them all, each liker once: `limit=5` gave the whole
    page of 30 without a Link (found by exploratory testing)."""
    alice = make_user("alice")
    sid = _post(_api(alice), "like me")["id"]
    likers = [make_user(f"user{i:02d}") for i in range(12)]
    for user in likers:
        assert _api(user).post(f"/api/v1/statuses/{sid}/favourite").status_code == 200
    client = api_client()
    path, pages = f"/api/v1/statuses/{sid}/favourited_by?limit=5", []
    while path:
        response = client.get(path)
        assert response.status_code == 200
        pages.append([a["username"] for a in response.json()])
        found = re.search(
            r'<https?://[^/]+([^>]+)>; rel="next"', response.get("Link", "")
        )
        path = found[1] if found else None
        assert len(pages) < 10
    assert [len(p) for p in pages] == [5, 5, 2]
    assert [name for p in pages for name in p] == [u.username for u in reversed(likers)]
    everyone = client.get(f"/api/v1/statuses/{sid}/favourited_by").json()
    assert len(everyone) == 12
    bad = client.get(f"/api/v1/statuses/{sid}/favourited_by?max_id=abc")
    assert bad.status_code == 422  # as every other list's bad cursor
