"""Polls through the client API (Mastodon's): posting one (form or JSON), the Poll
entity on a Status wherever it shows, voting, reading a poll, the instance's
limits, and what a scheduled post or an edit does with one."""

from __future__ import annotations

import time

import pytest

from api import entities
from config.redis import get_redis
from tests.api.helpers import api_client, token_for
from tests.helpers import make_user, run_jobs
from tests.roundtrips import get_round_trips
from timeline import keys, polls, privacy, services
from timeline.domain import (
    POLL_EXPIRES_MAX,
    POLL_EXPIRES_MIN,
    POLL_OPTION_MAX_CHARS,
    POLL_OPTIONS_MAX,
    Status,
)


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"


def _api(user):
    return api_client(token_for(user))


def _json_post(client, body: dict):
    return client.post("/api/v1/statuses", body, content_type="application/json")


def _poll_post(client, options=("yes", "no"), **poll) -> dict:
    response = _json_post(
        client,
        {
            "status": "Which one?",
            "poll": {"options": list(options), "expires_in": 3600, **poll},
        },
    )
    assert response.status_code == 200, response.content
    return response.json()


def _vote(client, sid, *choices):
    return client.post(f"/api/v1/polls/{sid}/votes", {"choices[]": list(choices)})


def _follow(follower, followee):
    services.follow_create(follower=follower, followee_id=followee.id)
    run_jobs()


def test_a_json_poll_posts_a_status_with_mastodons_poll_entity():
    alice = make_user("alice")
    before = time.time()
    status = _poll_post(_api(alice), options=("tea", "coffee", "water"))
    poll = status["poll"]
    assert poll["id"] == status["id"]
    assert poll["options"] == [
        {"title": "tea", "votes_count": 0},
        {"title": "coffee", "votes_count": 0},
        {"title": "water", "votes_count": 0},
    ]
    assert poll["multiple"] is False and poll["expired"] is False
    assert poll["votes_count"] == 0 and poll["voters_count"] == 0
    assert poll["emojis"] == []
    # Mastodon counts the author as having voted (their app shows the results).
    assert poll["voted"] is True and poll["own_votes"] == []
    closes = time.mktime(time.strptime(poll["expires_at"][:19], "%Y-%m-%dT%H:%M:%S"))
    closes -= time.timezone
    assert before + 3600 - 2 <= closes <= time.time() + 3600 + 1


def test_a_form_poll_posts_too_with_its_flags():
    alice = make_user("alice")
    response = _api(alice).post(
        "/api/v1/statuses",
        {
            "status": "Pick some",
            "poll[options][]": ["red", "green"],
            "poll[expires_in]": "600",
            "poll[multiple]": "true",
            "poll[hide_totals]": "1",
        },
    )
    assert response.status_code == 200, response.content
    poll = response.json()["poll"]
    assert poll["multiple"] is True
    # Totals hidden until it closes: each option's count is null, as Mastodon's.
    assert [o["votes_count"] for o in poll["options"]] == [None, None]
    assert [o["title"] for o in poll["options"]] == ["red", "green"]


def test_a_status_without_a_poll_says_null():
    alice = make_user("alice")
    response = _json_post(_api(alice), {"status": "plain", "poll": None})
    assert response.status_code == 200
    assert response.json()["poll"] is None


def test_a_bad_poll_is_a_422_and_nothing_is_posted():
    alice = make_user("alice")
    client = _api(alice)
    long = "x" * (POLL_OPTION_MAX_CHARS + 1)
    for poll in (
        {"options": ["only one"], "expires_in": 3600},
        {"options": [str(n) for n in range(POLL_OPTIONS_MAX + 1)], "expires_in": 3600},
        {"options": ["same", "Same"], "expires_in": 3600},
        {"options": ["a", ""], "expires_in": 3600},
        {"options": ["a", long], "expires_in": 3600},
        {"options": ["a", "b"], "expires_in": POLL_EXPIRES_MIN - 1},
        {"options": ["a", "b"], "expires_in": POLL_EXPIRES_MAX + 1},
        {"options": ["a", "b"], "expires_in": "soon"},
        {"options": ["a", "b"]},
        {"options": "a", "expires_in": 3600},
        {"expires_in": 3600},
    ):
        response = _json_post(client, {"status": "asking", "poll": poll})
        assert response.status_code == 422, poll
        assert response.json()["error"].startswith("Validation failed: "), poll
    response = client.post(
        "/api/v1/statuses",
        {"status": "asking", "poll[options][]": ["a", "b"], "poll[expires_in]": "1"},
    )
    assert response.status_code == 422
    assert "5 minutes" in response.json()["error"]
    assert get_redis().zcard(keys.posts(alice.id)) == 0


def test_a_scheduled_poll_is_kept_and_opens_when_posted():
    from timeline import fanout, jobs, scheduled

    alice, bob = make_user("alice"), make_user("bob")
    later = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 3600))
    response = _json_post(
        _api(alice),
        {
            "status": "later",
            "scheduled_at": later,
            "poll": {"options": ["a", "b"], "expires_in": 600, "multiple": True},
        },
    )
    assert response.status_code == 200, response.content
    params = response.json()["params"]
    assert params["poll"] == {
        "options": ["a", "b"],
        "expires_in": "600",
        "multiple": True,
        "hide_totals": False,
    }
    listed = _api(alice).get("/api/v1/scheduled_statuses").json()
    assert listed[0]["params"]["poll"] == params["poll"]
    # Moved to another time, it keeps its poll.
    sooner = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 1800))
    moved = _api(alice).put(
        f"/api/v1/scheduled_statuses/{listed[0]['id']}",
        {"scheduled_at": sooner},
        content_type="application/json",
    )
    assert moved.status_code == 200, moved.content
    assert moved.json()["params"]["poll"] == params["poll"]
    # A bad poll is refused as a post's, nothing scheduled.
    bad = _json_post(
        _api(alice),
        {
            "status": "x",
            "scheduled_at": later,
            "poll": {"options": ["a"], "expires_in": 600},
        },
    )
    assert bad.status_code == 422 and "at least 2 options" in bad.json()["error"]
    # Its job runs (made due now, as at its time): open 600 s from its posting.
    (entry,) = scheduled.scheduled_list(user=alice)
    jid = scheduled.schedule_job_id(alice.id, entry.id)
    get_redis().zadd(
        keys.job_queue(keys.slot_of_user(alice.id)), {jid: jobs.now_ms()}, xx=True
    )
    fanout.run_pending(sweep=True)
    posted = time.time()
    (status,) = _api(bob).get(f"/api/v1/accounts/{alice.id}/statuses").json()
    poll = status["poll"]
    assert [o["title"] for o in poll["options"]] == ["a", "b"] and poll["multiple"]
    closes = time.mktime(time.strptime(poll["expires_at"][:19], "%Y-%m-%dT%H:%M:%S"))
    closes -= time.timezone
    assert posted + 540 < closes <= posted + 600
    assert _vote(_api(bob), status["id"], 0, 1).status_code == 200


def test_voting_answers_the_poll_with_the_voters_choices_and_counts():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = _poll_post(_api(alice), options=("a", "b", "c"), multiple=True)["id"]
    response = _vote(_api(bob), sid, 0, 2)
    assert response.status_code == 200, response.content
    poll = response.json()
    assert poll["id"] == sid
    assert poll["voted"] is True and poll["own_votes"] == [0, 2]
    assert [o["votes_count"] for o in poll["options"]] == [1, 0, 1]
    assert poll["votes_count"] == 2 and poll["voters_count"] == 1
    # Carol has not voted: she sees the counts, and that she has not.
    seen = _api(carol).get(f"/api/v1/polls/{sid}").json()
    assert seen["voted"] is False and seen["own_votes"] == []
    assert seen["votes_count"] == 2
    # An anonymous reader gets no `voted` nor `own_votes`, as Mastodon's.
    anonymous = api_client().get(f"/api/v1/polls/{sid}").json()
    assert "voted" not in anonymous and "own_votes" not in anonymous
    assert anonymous["voters_count"] == 1


def test_the_voters_choices_show_on_every_read_of_the_status():
    alice, bob = make_user("alice"), make_user("bob")
    _follow(bob, alice)
    sid = _poll_post(_api(alice))["id"]
    run_jobs()
    client = _api(bob)
    assert _vote(client, sid, 1).status_code == 200

    def poll_in(statuses):
        (found,) = [s for s in statuses if s["id"] == sid]
        return found["poll"]

    for poll in (
        client.get(f"/api/v1/statuses/{sid}").json()["poll"],
        poll_in(client.get("/api/v1/timelines/home").json()),
        poll_in(client.get(f"/api/v1/accounts/{alice.id}/statuses").json()),
        poll_in(client.get("/api/v1/timelines/public").json()),
    ):
        assert poll["own_votes"] == [1] and poll["voted"] is True
        assert [o["votes_count"] for o in poll["options"]] == [0, 1]


def test_a_reblog_carries_its_originals_poll_with_the_viewers_vote():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    _follow(carol, bob)
    sid = _poll_post(_api(alice))["id"]
    _api(bob).post(f"/api/v1/statuses/{sid}/reblog").json()
    run_jobs()
    client = _api(carol)
    (shown,) = [s for s in client.get("/api/v1/timelines/home").json()]
    # The reblog's own `poll` is its original's, as Mastodon's: its id the one
    # an app votes by.
    assert shown["poll"] == shown["reblog"]["poll"]
    assert _vote(client, shown["poll"]["id"], 0).status_code == 200
    (shown,) = [s for s in client.get("/api/v1/timelines/home").json()]
    assert shown["reblog"]["id"] == sid
    assert shown["reblog"]["poll"]["own_votes"] == [0]
    assert shown["reblog"]["poll"]["votes_count"] == 1


def test_a_reblogs_id_is_no_polls():
    # Mastodon: a poll's id is its own (here its status's); a reblog has no poll.
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = _poll_post(_api(alice))["id"]
    reblog = _api(bob).post(f"/api/v1/statuses/{sid}/reblog").json()
    run_jobs()
    client = _api(carol)
    assert client.get(f"/api/v1/polls/{reblog['id']}").status_code == 404
    response = _vote(client, reblog["id"], 1)
    assert response.status_code == 404
    assert response.json() == {"error": "Record not found"}
    poll = client.get(f"/api/v1/polls/{sid}").json()
    assert poll["voters_count"] == 0 and poll["voted"] is False
    assert _vote(client, sid, 1).status_code == 200


def test_votes_that_cannot_count_are_422s_and_change_nothing():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _poll_post(_api(alice))["id"]
    client = _api(bob)
    for choices in ((), (2,), (-1,), ("x",), (0, 1)):
        response = _vote(client, sid, *choices)
        assert response.status_code == 422, choices
        assert response.json()["error"].startswith("Validation failed: ")
    own = _vote(_api(alice), sid, 0)
    assert own.status_code == 422
    assert "own poll" in own.json()["error"]
    assert _vote(client, sid, 0).status_code == 200
    again = _vote(client, sid, 1)
    assert again.status_code == 422
    assert "already voted" in again.json()["error"]
    poll = client.get(f"/api/v1/polls/{sid}").json()
    assert [o["votes_count"] for o in poll["options"]] == [1, 0]
    assert poll["own_votes"] == [0]


def test_a_closed_poll_shows_its_totals_and_takes_no_vote():
    alice, bob = make_user("alice"), make_user("bob")
    made = polls.poll_make(
        ["early", "late"], 600, hide_totals=True, now=time.time() - 3600
    )
    status = services.status_create(author=alice, text="Closed", poll=made)
    client = _api(bob)
    poll = client.get(f"/api/v1/polls/{status.id}").json()
    assert poll["expired"] is True
    # Hidden totals show once the poll has closed.
    assert [o["votes_count"] for o in poll["options"]] == [0, 0]
    response = _vote(client, status.id, 0)
    assert response.status_code == 422
    assert "closed" in response.json()["error"]


def test_a_poll_the_viewer_may_not_see_is_404():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    sid = _poll_post(_api(alice))["id"]
    plain = _json_post(_api(alice), {"status": "no poll"}).json()["id"]
    privacy.account_privacy_set(user=alice, private=True)
    _follow(carol, alice)  # a request, not approved
    for client in (_api(bob), _api(carol), api_client()):
        assert client.get(f"/api/v1/polls/{sid}").status_code == 404
    assert _vote(_api(bob), sid, 0).status_code == 404
    # A status without a poll, and no status at all: 404 too.
    assert _api(alice).get(f"/api/v1/polls/{plain}").status_code == 404
    assert _api(alice).get("/api/v1/polls/99999999").status_code == 404
    assert _api(alice).get(f"/api/v1/polls/{sid}").status_code == 200


def test_polls_need_their_scopes():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _poll_post(_api(alice))["id"]
    reader = api_client(token_for(bob, scopes=("read:statuses",)))
    assert reader.get(f"/api/v1/polls/{sid}").status_code == 200
    assert _vote(reader, sid, 0).status_code == 403
    writer = api_client(token_for(bob, scopes=("write:statuses",)))
    assert _vote(writer, sid, 0).status_code == 200
    assert _vote(api_client(), sid, 0).status_code == 401


def test_the_instance_states_the_poll_limits():
    for path in ("/api/v1/instance", "/api/v2/instance"):
        polls_config = api_client().get(path).json()["configuration"]["polls"]
        assert polls_config == {
            "max_options": POLL_OPTIONS_MAX,
            "max_characters_per_option": POLL_OPTION_MAX_CHARS,
            "min_expiration": POLL_EXPIRES_MIN,
            "max_expiration": POLL_EXPIRES_MAX,
        }


def test_an_edit_keeps_the_poll_and_refuses_to_change_it():
    alice, bob = make_user("alice"), make_user("bob")
    client = _api(alice)
    sid = _poll_post(client, options=("a", "b"))["id"]
    assert _vote(_api(bob), sid, 1).status_code == 200
    same = client.put(
        f"/api/v1/statuses/{sid}",
        {"status": "Which, then?", "poll": {"options": ["a", "b"], "expires_in": 60}},
        content_type="application/json",
    )
    assert same.status_code == 200, same.content
    assert "Which, then?" in same.json()["content"]
    assert [o["votes_count"] for o in same.json()["poll"]["options"]] == [0, 1]
    changed = client.put(
        f"/api/v1/statuses/{sid}",
        {"status": "Changed", "poll": {"options": ["a", "c"], "expires_in": 600}},
        content_type="application/json",
    )
    assert changed.status_code == 422
    assert "cannot be changed" in changed.json()["error"]
    plain = _json_post(client, {"status": "plain"}).json()["id"]
    added = client.put(
        f"/api/v1/statuses/{plain}",
        {"status": "now a poll", "poll": {"options": ["x", "y"], "expires_in": 600}},
        content_type="application/json",
    )
    assert added.status_code == 422
    shown = client.get(f"/api/v1/statuses/{sid}").json()
    assert "Which, then?" in shown["content"]
    assert [o["title"] for o in shown["poll"]["options"]] == ["a", "b"]
    # Without a `poll` the edit leaves it as it was.
    text_only = client.put(
        f"/api/v1/statuses/{sid}",
        {"status": "Only text"},
        content_type="application/json",
    )
    assert text_only.json()["poll"]["options"][1]["votes_count"] == 1
    # Every version in its history shows the poll, as Mastodon's StatusEdit does.
    history = client.get(f"/api/v1/statuses/{sid}/history").json()
    assert len(history) == 3
    assert all(
        v["poll"] == {"options": [{"title": "a"}, {"title": "b"}]} for v in history
    )


def test_a_pulled_authors_poll_shows_its_tally_and_the_viewers_vote(settings):
    settings.FANOUT_PUSH_MAX = 2  # star's statuses are read from their outbox
    star, bob = make_user("star"), make_user("bob")
    for fan in [bob, *(make_user(f"fan{i}") for i in range(3))]:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    sid = _poll_post(_api(star))["id"]
    run_jobs()
    assert get_redis().zrange(keys.pulls(bob.id), 0, -1) == [str(star.id)]
    client = _api(bob)
    assert _vote(client, sid, 0).status_code == 200
    (shown,) = client.get("/api/v1/timelines/home").json()
    assert shown["poll"]["own_votes"] == [0]
    assert [o["votes_count"] for o in shown["poll"]["options"]] == [1, 0]


def test_a_status_read_without_its_tally_still_gives_a_valid_poll():
    """An outbox row carries the poll but not its tally (`Status.votes` None): the
    entity says no counts rather than failing or inventing a vote."""
    alice = make_user("alice")
    made = polls.poll_make(["a", "b"], 600)
    status = services.status_create(author=alice, text="Asked", poll=made)
    untallied = Status.from_json(status.id, status.to_json())  # its outbox entry
    assert untallied.poll == made and untallied.votes is None
    poll = entities.poll(untallied, viewer=alice.id + 1, now=time.time())
    assert poll["votes_count"] == 0 and poll["voters_count"] is None
    assert [o["votes_count"] for o in poll["options"]] == [None, None]
    assert poll["voted"] is False and poll["own_votes"] == []


@pytest.mark.real_redis
def test_a_poll_costs_no_round_trip_more():
    alice, bob = make_user("alice"), make_user("bob")
    _follow(bob, alice)
    plain = _json_post(_api(alice), {"status": "plain"}).json()["id"]
    asked = _poll_post(_api(alice))["id"]
    run_jobs()
    client = _api(bob)
    assert _vote(client, asked, 0).status_code == 200
    assert get_round_trips(client, f"/api/v1/statuses/{asked}") == get_round_trips(
        client, f"/api/v1/statuses/{plain}"
    )
    assert get_round_trips(client, f"/api/v1/polls/{asked}") == get_round_trips(
        client, f"/api/v1/statuses/{asked}"
    )
    home = get_round_trips(client, "/api/v1/timelines/home")
    services.status_delete(user=alice, sid=int(asked))
    run_jobs()
    assert get_round_trips(client, "/api/v1/timelines/home") == home


def test_a_reply_may_ask_a_poll_and_a_repeated_key_makes_one():
    alice, bob = make_user("alice"), make_user("bob")
    parent = _json_post(_api(alice), {"status": "Plans?"}).json()["id"]
    client = _api(bob)
    body = {
        "status": "@alice when?",
        "in_reply_to_id": parent,
        "poll": {"options": ["today", "tomorrow"], "expires_in": 900},
    }
    first = client.post(
        "/api/v1/statuses",
        body,
        content_type="application/json",
        headers={"Idempotency-Key": "poll-once"},
    )
    assert first.status_code == 200, first.content
    assert first.json()["in_reply_to_id"] == parent
    assert [o["title"] for o in first.json()["poll"]["options"]] == [
        "today",
        "tomorrow",
    ]
    again = client.post(
        "/api/v1/statuses",
        body,
        content_type="application/json",
        headers={"Idempotency-Key": "poll-once"},
    )
    assert again.json()["id"] == first.json()["id"]
    assert get_redis().zcard(keys.posts(bob.id)) == 1
    assert _vote(_api(alice), first.json()["id"], 1).json()["own_votes"] == [1]


def test_a_closed_poll_is_a_poll_notification_for_its_voters_and_author():
    alice, bob = make_user("alice"), make_user("bob")
    poll = polls.poll_make(["tea", "coffee"], 300, now=time.time() - 299.2)
    sid = services.status_create(author=alice, text="Which one?", poll=poll).id
    run_jobs()
    assert _vote(_api(bob), sid, 1).status_code == 200
    time.sleep(0.9)
    run_jobs(sweep=True)
    for user in (bob, alice):
        found = _api(user).get("/api/v1/notifications?types[]=poll").json()
        assert [(n["type"], n["account"]["username"]) for n in found] == [
            ("poll", "alice")
        ]
        status = found[0]["status"]
        assert status["id"] == str(sid) and status["poll"]["expired"] is True
        assert status["poll"]["options"][1]["votes_count"] == 1
    assert _api(bob).get("/api/v1/notifications?exclude_types[]=poll").json() == []


def test_a_vote_reads_as_no_bookmark_pin_nor_mute_on_any_path():
    # The viewer's vote sits among their like, repost, bookmark, pin and mute in
    # a read's row: a vote must not read as any of the others, nor they as it.
    alice, bob = make_user("alice"), make_user("bob")
    _follow(bob, alice)
    sid = _poll_post(_api(alice))["id"]
    client = _api(bob)
    assert _vote(client, sid, 1).status_code == 200
    reblog = client.post(f"/api/v1/statuses/{sid}/reblog").json()["id"]
    run_jobs()
    shown = [
        client.get(f"/api/v1/statuses/{sid}").json(),
        client.get(f"/api/v1/statuses/{reblog}").json(),
        *client.get("/api/v1/timelines/home").json(),
        *client.get(f"/api/v1/accounts/{alice.id}/statuses").json(),
        *client.get(f"/api/v1/accounts/{bob.id}/statuses").json(),
    ]
    for entity in shown:
        for status in (entity, entity["reblog"]):
            if status is None:
                continue
            assert (status["bookmarked"], status["pinned"], status["muted"]) == (
                False,
                False,
                False,
            )
            assert status["poll"]["own_votes"] == [1]
    client.post(f"/api/v1/statuses/{sid}/bookmark")
    client.post(f"/api/v1/statuses/{sid}/mute")
    (marked,) = client.get("/api/v1/bookmarks").json()
    assert marked["bookmarked"] and marked["muted"] and not marked["pinned"]
    assert marked["poll"]["own_votes"] == [1]


def test_a_private_authors_poll_notification_reaches_only_who_may_see_the_status():
    # Told before she turned private: shown to her follower and to herself, not
    # to a voter who does not follow her (the status is a 404 to him); one who
    # voted before she turned private is not told once it closes.
    alice, bob, dave, eve = (make_user(n) for n in ("alice", "bob", "dave", "eve"))
    _follow(bob, alice)
    told = polls.poll_make(["tea", "coffee"], 300, now=time.time() - 299.2)
    sid = services.status_create(author=alice, text="Which one?", poll=told).id
    later = polls.poll_make(["tea", "coffee"], 300, now=time.time() - 297.0)
    other = services.status_create(author=alice, text="And now?", poll=later).id
    run_jobs()
    for user, status in ((bob, sid), (dave, sid), (eve, other)):
        assert _vote(_api(user), status, 1).status_code == 200
    time.sleep(0.9)
    run_jobs(sweep=True)
    assert [n["type"] for n in _api(dave).get("/api/v1/notifications").json()] == [
        "poll"
    ]
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs(sweep=True)
    time.sleep(max(0.0, later.expires - time.time()) + 0.1)  # the later one closes
    run_jobs(sweep=True)

    def polls_told(user, path="/api/v1/notifications?types[]=poll"):
        return [n["status"]["id"] for n in _api(user).get(path).json()]

    assert _api(dave).get(f"/api/v1/statuses/{sid}").status_code == 404
    assert polls_told(dave) == []
    assert polls_told(eve) == []
    assert _api(eve).get("/api/v2/notifications/unread_count").json() == {"count": 0}
    assert polls_told(bob) == [str(sid)]
    assert polls_told(alice) == [str(other), str(sid)]
    grouped = _api(dave).get("/api/v2/notifications").json()
    assert grouped["notification_groups"] == []
