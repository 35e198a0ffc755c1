"""Quote posts through the client API (Mastodon 4.5's): `quoted_status_id` on a
post, the Status entity's `quote` and `quote_approval`, the quotes of a status,
and the `quote` notification."""

from __future__ import annotations

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import blocks, privacy, quotes, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


@pytest.fixture
def people():
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def _api(user):
    return api_client(token_for(user))


def _quote(client, sid, text="look at this"):
    return client.post("/api/v1/statuses", {"status": text, "quoted_status_id": sid})


def test_posting_a_quote_answers_the_status_with_its_quote(r, people):
    original = services.status_create(author=people["alice"], text="the words")
    answer = _quote(_api(people["bob"]), original.id)
    assert answer.status_code == 200, answer.content
    quote = answer.json()["quote"]
    assert quote["state"] == "accepted"
    assert quote["quoted_status"]["id"] == str(original.id)
    assert "the words" in quote["quoted_status"]["content"]
    assert quote["quoted_status"]["account"]["username"] == "alice"


def test_timelines_and_the_status_show_the_quote(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    services.follow_create(follower=carol, followee_id=bob.id)
    original = services.status_create(author=alice, text="the words")
    made = _quote(_api(bob), original.id).json()
    run_jobs()
    client = _api(carol)
    for path in ("/api/v1/timelines/home", f"/api/v1/statuses/{made['id']}"):
        body = client.get(path).json()
        entity = body[0] if isinstance(body, list) else body
        assert entity["quote"]["state"] == "accepted", path
        assert entity["quote"]["quoted_status"]["id"] == str(original.id)
        assert entity["quote_approval"]["current_user"] == "automatic"
    services.status_delete(user=alice, sid=original.id)
    entity = client.get(f"/api/v1/statuses/{made['id']}").json()
    assert entity["quote"] == {"state": "deleted", "quoted_status": None}


def test_a_hidden_quoted_status_is_unauthorized(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="the words")
    made = _quote(_api(bob), original.id).json()
    blocks.block_create(blocker=alice, blocked_id=carol.id)
    entity = _api(carol).get(f"/api/v1/statuses/{made['id']}").json()
    assert entity["quote"] == {"state": "unauthorized", "quoted_status": None}
    assert "the words" not in str(entity)


def test_a_quote_of_a_quote_nests_a_shallow_quote(r, people):
    original = services.status_create(author=people["alice"], text="first")
    middle = _quote(_api(people["bob"]), original.id).json()
    outer = _quote(_api(people["carol"]), middle["id"]).json()
    inner = outer["quote"]["quoted_status"]
    assert inner["id"] == middle["id"]
    assert inner["quote"] == {"state": "accepted", "quoted_status_id": str(original.id)}


def test_what_cannot_be_quoted_is_mastodons_404(r, people):
    alice, bob = people["alice"], people["bob"]
    client = _api(bob)
    for sid in ("999", "abc"):
        answer = _quote(client, sid)
        assert answer.status_code == 404
        assert answer.json() == {
            "error": "The post you are trying to quote does not appear to exist."
        }
    privacy.account_privacy_set(user=alice, private=True)
    services.follow_create(follower=bob, followee_id=alice.id)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    secret = services.status_create(author=alice, text="secret")
    answer = _quote(client, secret.id)
    assert answer.status_code == 404
    # Nothing was posted.
    assert _api(bob).get(f"/api/v1/accounts/{bob.id}/statuses").json() == []
    mine = _api(alice).get(f"/api/v1/statuses/{secret.id}").json()
    assert mine["quote_approval"] == {
        "automatic": [],
        "manual": [],
        "current_user": "automatic",
    }


def test_the_quotes_of_a_status_and_the_notification(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="the words")
    first = _quote(_api(bob), original.id, "one").json()
    second = _quote(_api(carol), original.id, "two").json()
    run_jobs()
    client = _api(alice)
    answer = client.get(f"/api/v1/statuses/{original.id}/quotes", {"limit": 1})
    assert answer.status_code == 200
    assert [s["id"] for s in answer.json()] == [second["id"]]
    assert "max_id=" in answer.headers["Link"]
    rest = client.get(
        f"/api/v1/statuses/{original.id}/quotes",
        {"limit": 1, "max_id": second["id"]},
    ).json()
    assert [s["id"] for s in rest] == [first["id"]]
    assert client.get("/api/v1/statuses/999/quotes").status_code == 404
    told = client.get("/api/v1/notifications", {"types[]": "quote"}).json()
    assert sorted((n["type"], n["status"]["id"]) for n in told) == sorted(
        [("quote", first["id"]), ("quote", second["id"])]
    )


def test_the_quoted_author_revokes_a_quote(r, people, settings):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    settings.FANOUT_PUSH_MAX = 0  # bob's statuses are read from his outbox too
    services.follow_create(follower=carol, followee_id=bob.id)
    original = services.status_create(author=alice, text="take it back")
    made = _quote(_api(bob), original.id).json()
    reposted = _api(carol).post(f"/api/v1/statuses/{made['id']}/reblog")
    assert reposted.status_code == 200
    run_jobs()
    path = f"/api/v1/statuses/{original.id}/quotes/{made['id']}/revoke"
    assert _api(bob).post(path).status_code == 403  # not bob's status
    answer = _api(alice).post(path)
    assert answer.status_code == 200, answer.content
    assert answer.json()["quote"] == {"state": "revoked", "quoted_status": None}
    assert _api(alice).post(path).status_code == 200  # again: the same
    run_jobs()
    client = _api(carol)
    for body in (
        client.get(f"/api/v1/statuses/{made['id']}").json(),
        client.get("/api/v1/timelines/home").json(),
        client.get(f"/api/v1/accounts/{carol.id}/statuses").json(),
    ):
        assert "take it back" not in str(body)
    assert _api(alice).get(f"/api/v1/statuses/{original.id}/quotes").json() == []


@pytest.mark.parametrize("how", ["direct", "private", "blocked"])
def test_revoking_a_quote_one_may_not_see_answers_nothing_of_it(r, people, how):
    alice, bob = people["alice"], people["bob"]
    original = services.status_create(author=alice, text="public words")
    if how == "private":
        privacy.account_privacy_set(user=bob, private=True)
    made = _api(bob).post(
        "/api/v1/statuses",
        {
            "status": "@carol my private thought",
            "quoted_status_id": original.id,
            **({"visibility": "direct"} if how == "direct" else {}),
        },
    )
    assert made.status_code == 200, made.content
    if how == "blocked":
        blocks.block_create(blocker=bob, blocked_id=alice.id)
    run_jobs()
    path = f"/api/v1/statuses/{original.id}/quotes/{made.json()['id']}/revoke"
    answer = _api(alice).post(path)
    assert "private thought" not in answer.content.decode()
    assert answer.status_code == 404
    # Revoked all the same: its author's readers see nothing of alice's post.
    seen = _api(bob).get(f"/api/v1/statuses/{made.json()['id']}")
    assert seen.json()["quote"] == {"state": "revoked", "quoted_status": None}


def test_a_status_counts_its_quotes_as_mastodons_quotes_count(r, people):
    """Mastodon 4.5's Status carries `quotes_count` (its accepted quotes): an app
    shows it beside the reblogs and favourites counts."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="the words")
    client = _api(carol)
    assert client.get(f"/api/v1/statuses/{original.id}").json()["quotes_count"] == 0
    made = _quote(_api(bob), original.id).json()
    _quote(client, original.id, "mine too")
    run_jobs()
    assert client.get(f"/api/v1/statuses/{original.id}").json()["quotes_count"] == 2
    assert made["quotes_count"] == 0  # the quote itself is quoted by no one
    path = f"/api/v1/statuses/{original.id}/quotes/{made['id']}/revoke"
    assert _api(alice).post(path).status_code == 200
    assert client.get(f"/api/v1/statuses/{original.id}").json()["quotes_count"] == 1


def test_the_quotes_of_a_status_page_upwards_with_since_id_and_min_id(r, people):
    """Mastodon's quotes list takes `since_id` (and links the newer page with
    `rel="prev"`): an app polls it for new quotes, or follows the link up."""
    alice, bob = people["alice"], people["bob"]
    original = services.status_create(author=alice, text="the words")
    made = [_quote(_api(bob), original.id, f"quote {n}").json()["id"] for n in range(3)]
    run_jobs()
    client = _api(alice)
    path = f"/api/v1/statuses/{original.id}/quotes"
    newer = client.get(path, {"since_id": made[0]})
    assert [s["id"] for s in newer.json()] == [made[2], made[1]]
    above = client.get(path, {"min_id": made[0], "limit": 1})
    assert [s["id"] for s in above.json()] == [made[1]]
    page = client.get(path, {"max_id": made[2], "limit": 1})
    assert [s["id"] for s in page.json()] == [made[1]]
    prev = [
        link.split(";")[0].strip("<> ")
        for link in page.headers["Link"].split(",")
        if 'rel="prev"' in link
    ]
    assert len(prev) == 1, page.headers["Link"]
    assert [s["id"] for s in client.get(prev[0]).json()] == [made[2]]


def test_a_direct_message_is_quoted_by_no_one_not_even_its_author(r, people):
    """Mastodon's quote policy denies a direct message to everyone, its author
    included (`quote_policy_for_account`), and the site's own `quote_approval`
    says so: the post is refused with Mastodon's 404 and nothing is posted."""
    client = _api(people["bob"])
    dm = client.post(
        "/api/v1/statuses", {"status": "@carol hi", "visibility": "direct"}
    ).json()
    assert dm["quote_approval"]["current_user"] == "denied"
    answer = _quote(client, dm["id"])
    assert answer.status_code == 404
    assert answer.json() == {
        "error": "The post you are trying to quote does not appear to exist."
    }
    # Nothing was posted.
    assert client.get(f"/api/v1/accounts/{people['bob'].id}/statuses").json() == []


def test_a_visitor_is_denied_quoting_as_at_mastodons(r, people):
    """Mastodon's QuoteApproval answers `denied` to a visitor (no account may
    quote nothing), not `unknown` (which tells an app to offer the Quote button
    and let the server decide)."""
    original = services.status_create(author=people["alice"], text="the words")
    entity = api_client().get(f"/api/v1/statuses/{original.id}").json()
    assert entity["quote_approval"] == {
        "automatic": ["public"],
        "manual": [],
        "current_user": "denied",
    }


def test_a_revoked_quote_is_no_longer_named_by_the_quotes_of_its_quote(r, people):
    """Carol quotes bob's quote of alice's post; alice revokes bob's quote: carol's
    embed of bob's post no longer names alice's (its ShallowQuote said `accepted`
    with her post's id, and the site's embed linked it, after she detached it)."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    first = services.status_create(author=alice, text="the words")
    middle = _quote(_api(bob), first.id).json()
    outer = _quote(_api(carol), middle["id"]).json()
    run_jobs()
    path = f"/api/v1/statuses/{first.id}/quotes/{middle['id']}/revoke"
    assert _api(alice).post(path).status_code == 200
    run_jobs()
    reader = make_user("dan")
    entity = _api(reader).get(f"/api/v1/statuses/{outer['id']}").json()
    inner = entity["quote"]["quoted_status"]
    assert inner["id"] == middle["id"]
    assert str(first.id) not in str(inner["quote"])
    assert f"/s/{first.id}/" not in page(logged_in_client("dan"), f"/s/{outer['id']}/")


def test_revoking_another_s_quote_is_mastodons_403(r, people):
    """Mastodon answers a revoke by anyone but the quoted author with 403 (its
    QuotePolicy refuses it), the quote left as it was; 404 stays for a status
    hidden from them or a status that does not quote it."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="the words")
    made = _quote(_api(bob), original.id).json()
    run_jobs()
    path = f"/api/v1/statuses/{original.id}/quotes/{made['id']}/revoke"
    for client in (_api(bob), _api(carol)):  # its quoter, a passer-by
        answer = client.post(path)
        assert answer.status_code == 403
        assert answer.json() == {"error": "This action is not allowed"}
    entity = _api(carol).get(f"/api/v1/statuses/{made['id']}").json()
    assert entity["quote"]["state"] == "accepted"
    blocks.block_create(blocker=alice, blocked_id=carol.id)
    assert _api(carol).post(path).status_code == 404  # hidden from her
    other = f"/api/v1/statuses/{original.id}/quotes/{original.id}/revoke"
    assert _api(bob).post(other).status_code == 404  # not a quote of it


def test_the_quoted_status_keeps_its_visibility_in_the_quote(r, people):
    """An unlisted status quoted shows `unlisted` in the Quote's `quoted_status`,
    as read by id (an app draws its visibility icon from it)."""
    alice, bob = people["alice"], people["bob"]
    quiet = (
        _api(alice)
        .post("/api/v1/statuses", {"status": "quietly", "visibility": "unlisted"})
        .json()
    )
    assert quiet["visibility"] == "unlisted"
    made = _quote(_api(bob), quiet["id"]).json()
    assert made["quote"]["quoted_status"]["visibility"] == "unlisted"
    run_jobs()
    entity = _api(people["carol"]).get(f"/api/v1/statuses/{made['id']}").json()
    assert entity["quote"]["quoted_status"]["visibility"] == "unlisted"


def test_a_deleted_status_is_not_named_accepted_two_levels_up(r, people):
    """Carol quotes bob's quote of alice's post; alice deletes her post: the
    ShallowQuote in carol's embed of bob's post is Mastodon's `deleted` with no
    id, not `accepted` naming a status that answers 404."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    first = services.status_create(author=alice, text="the words")
    middle = _quote(_api(bob), first.id).json()
    outer = _quote(_api(carol), middle["id"]).json()
    services.status_delete(user=alice, sid=first.id)
    run_jobs()
    entity = _api(carol).get(f"/api/v1/statuses/{outer['id']}").json()
    inner = entity["quote"]["quoted_status"]["quote"]
    assert inner == {"state": "deleted", "quoted_status_id": None}


@pytest.mark.real_redis
def test_paging_the_quotes_up_costs_no_round_trip_more(r, people):
    """`since_id` and `min_id` are read in the list's own read: the same round
    trips as its first page (3 with the token check, on one server and a
    Cluster)."""
    from tests.roundtrips import RoundTripCounter

    original = services.status_create(author=people["alice"], text="the words")
    made = [_quote(_api(people["bob"]), original.id, f"q {n}").json() for n in "ab"]
    run_jobs()
    client = _api(people["carol"])
    path = f"/api/v1/statuses/{original.id}/quotes"
    costs = []
    for query in ({}, {"since_id": made[0]["id"]}, {"min_id": made[0]["id"]}):
        client.get(path, query)  # warm: connections open, scripts loaded
        with RoundTripCounter() as counter:
            assert client.get(path, query).status_code == 200
        costs.append(counter.count)
    assert costs == [3, 3, 3]


def test_the_quoted_status_says_when_it_was_edited(r, people):
    """An edit of the quoted status reaches the Quote's `quoted_status` with its
    `edited_at`, as read by id (an app marks it edited), not only its text."""
    alice, bob = people["alice"], people["bob"]
    original = _api(alice).post("/api/v1/statuses", {"status": "first words"}).json()
    made = _quote(_api(bob), original["id"]).json()
    assert made["quote"]["quoted_status"]["edited_at"] is None
    edited = _api(alice).put(
        f"/api/v1/statuses/{original['id']}",
        {"status": "second words"},
        content_type="application/json",
    )
    assert edited.status_code == 200, edited.content
    run_jobs()
    inner = _api(people["carol"]).get(f"/api/v1/statuses/{made['id']}").json()
    inner = inner["quote"]["quoted_status"]
    assert "second words" in inner["content"]
    assert inner["edited_at"] == edited.json()["edited_at"]


@pytest.mark.parametrize(
    ("how", "state"), [("block", "blocked_account"), ("mute", "muted_account")]
)
def test_a_quoted_author_the_reader_blocked_or_muted_is_said_so(r, people, how, state):
    """Carol blocks (or mutes) alice, whose post bob quoted in a reply: the Quote
    is Mastodon 4.5's `blocked_account` (`muted_account`) with the quoted status,
    for her app to fold behind a "Show anyway", on the status, her home and the
    thread (as StatusFilter#filter_state_for_quote says it); alice blocking her
    stays `unauthorized`, nothing of it shown."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    services.follow_create(follower=carol, followee_id=bob.id)
    parent = services.status_create(author=bob, text="a thread")
    original = services.status_create(author=alice, text="the words")
    made = _api(bob).post(
        "/api/v1/statuses",
        {
            "status": "look",
            "quoted_status_id": original.id,
            "in_reply_to_id": parent.id,
        },
    )
    assert made.status_code == 200, made.content
    made = made.json()
    run_jobs()
    if how == "block":
        blocks.block_create(blocker=carol, blocked_id=alice.id)
    else:
        blocks.mute_create(user=carol, muted_id=alice.id)
    run_jobs()
    client = _api(carol)
    found = {
        "status": client.get(f"/api/v1/statuses/{made['id']}").json(),
        "home": client.get("/api/v1/timelines/home").json()[0],
        "thread": client.get(f"/api/v1/statuses/{parent.id}/context").json()[
            "descendants"
        ][0],
    }
    for where, entity in found.items():
        assert entity["id"] == made["id"], where
        assert entity["quote"]["state"] == state, where
        assert entity["quote"]["quoted_status"]["id"] == str(original.id), where
        assert "the words" in entity["quote"]["quoted_status"]["content"], where
    blocks.block_create(blocker=alice, blocked_id=carol.id)
    entity = client.get(f"/api/v1/statuses/{made['id']}").json()
    assert entity["quote"] == {"state": "unauthorized", "quoted_status": None}


def test_the_quotes_of_a_muted_authors_status_say_muted_account(r, people):
    """Carol muted alice and lists the quotes of alice's post: each one's Quote is
    `muted_account` with the post, on one server (its row script checks) and on a
    Cluster (a read in the page's second round trip), as Mastodon's."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="the words")
    _quote(_api(bob), original.id)
    run_jobs()
    blocks.mute_create(user=carol, muted_id=alice.id)
    listed = _api(carol).get(f"/api/v1/statuses/{original.id}/quotes").json()
    assert [q["quote"]["state"] for q in listed] == ["muted_account"]
    assert listed[0]["quote"]["quoted_status"]["id"] == str(original.id)


def test_quoting_a_reblogs_id_is_mastodons_404(r, people):
    """A reblog is quoted by no one, its reblogger included (Mastodon 4.5's
    `quote_policy_for_account` denies a reblog, and its statuses API answers 404
    The post you are trying to quote does not appear to exist.); nothing is
    posted; the original's own id quotes it."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="the words")
    reblog = _api(bob).post(f"/api/v1/statuses/{original.id}/reblog").json()
    for who in (carol, bob):
        answer = _quote(_api(who), reblog["id"])
        assert answer.status_code == 404, who.username
        assert answer.json() == {
            "error": "The post you are trying to quote does not appear to exist."
        }
    assert _api(carol).get(f"/api/v1/accounts/{carol.id}/statuses").json() == []
    assert (
        _api(alice).get(f"/api/v1/statuses/{original.id}").json()["quotes_count"] == 0
    )
    made = _quote(_api(carol), original.id)
    assert made.status_code == 200
    assert made.json()["quote"]["quoted_status"]["id"] == str(original.id)


def test_a_quote_made_after_a_deletion_two_levels_up_says_deleted(r, people):
    """Alice's post is deleted, then carol quotes bob's quote of it: her embed's
    ShallowQuote is `deleted` with no id from the start (the deletion's job,
    done before her quote, could not tell it)."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    first = services.status_create(author=alice, text="the words")
    middle = _quote(_api(bob), first.id).json()
    services.status_delete(user=alice, sid=first.id)
    run_jobs()
    outer = _quote(_api(carol), middle["id"]).json()
    run_jobs()
    for entity in (outer, _api(carol).get(f"/api/v1/statuses/{outer['id']}").json()):
        inner = entity["quote"]["quoted_status"]["quote"]
        assert inner == {"state": "deleted", "quoted_status_id": None}


def test_a_quote_made_while_the_status_two_levels_up_is_deleted_says_deleted(
    r, people, monkeypatch
):
    """Carol quotes bob's quote of alice's post as alice deletes it: her request
    finds the post standing, then the deletion's job walks bob's quotes before
    hers is among them. Her embed's ShallowQuote still ends `deleted` with no id
    (it named the deleted post as accepted for good: a check, then a set)."""
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    first = services.status_create(author=alice, text="the words")
    middle = _quote(_api(bob), first.id).json()
    run_jobs()
    made = quotes._quote_of

    def deleted_meanwhile(quoted):
        quote = made(quoted)  # found standing
        services.status_delete(user=alice, sid=first.id)
        run_jobs()  # its job walks bob's quotes: carol's is not among them yet
        return quote

    monkeypatch.setattr(quotes, "_quote_of", deleted_meanwhile)
    outer = _quote(_api(carol), middle["id"]).json()
    run_jobs()
    got = _api(carol).get(f"/api/v1/statuses/{outer['id']}").json()
    inner = got["quote"]["quoted_status"]["quote"]
    assert inner == {"state": "deleted", "quoted_status_id": None}
