"""Timelines through the client API: home, public, tag, an account's statuses;
the site's rules on each, and Mastodon's paging with Link headers."""

from __future__ import annotations

import re

import pytest

from accounts import services as accounts_services
from accounts.selectors import user_get
from config.redis import get_redis, is_cluster
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
from timeline import blocks, keys, privacy, services, social


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_API = "off"


def _api(user):
    return api_client(token_for(user))


def _follow(follower, followee):
    services.follow_create(follower=follower, followee_id=followee.id)
    run_jobs()


def _post(user, text: str) -> int:
    return services.status_create(author=user, text=text).id


def _ids(response) -> list[int]:
    assert response.status_code == 200, response.content
    return [int(s["id"]) for s in response.json()]


def _links(response) -> dict[str, str]:
    """rel -> the query of its URL."""
    found = re.findall(
        r'<http://testserver([^>]*)>; rel="(\w+)"', response.get("Link", "")
    )
    return {rel: url for url, rel in found}


def _walk(client, path: str, rel: str = "next") -> list[list[int]]:
    pages = []
    for _ in range(20):
        response = client.get(path)
        pages.append(_ids(response))
        path = _links(response).get(rel)
        if path is None or not pages[-1]:
            return pages
    raise AssertionError("the pages never end")


@pytest.fixture
def home_of_50():
    """Bob follows alice, who posted 50 statuses; bob's API client and the ids,
    newest first."""
    alice, bob = make_user("alice"), make_user("bob")
    _follow(bob, alice)
    sids = [_post(alice, f"status {i}") for i in range(50)]
    run_jobs()
    return _api(bob), sids[::-1]


def test_a_home_walked_by_max_id_repeats_and_skips_nothing(home_of_50):
    client, sids = home_of_50
    pages = _walk(client, "/api/v1/timelines/home?limit=20")
    assert [len(p) for p in pages] == [20, 20, 10]
    assert [sid for p in pages for sid in p] == sids
    # The same order as the site's home shows.
    assert status_ids(page(logged_in_client("bob"), "/")) == sids[:30]


def test_link_headers_name_the_older_and_the_newer_pages(home_of_50):
    client, sids = home_of_50
    response = client.get("/api/v1/timelines/home?limit=20")
    assert response["Link"] == (
        f"<http://testserver/api/v1/timelines/home?limit=20&max_id={sids[19]}>; "
        f'rel="next", <http://testserver/api/v1/timelines/home?limit=20&'
        f'min_id={sids[0]}>; rel="prev"'
    )
    last = client.get(f"/api/v1/timelines/home?limit=20&max_id={sids[39]}")
    assert set(_links(last)) == {"prev"}  # nothing older
    assert _ids(client.get(f"/api/v1/timelines/home?max_id={sids[-1]}")) == []


def test_min_id_gives_the_page_just_above_and_since_id_the_newest(home_of_50):
    client, sids = home_of_50
    above = client.get(f"/api/v1/timelines/home?limit=5&min_id={sids[25]}")
    assert _ids(above) == sids[20:25]
    assert _links(above) == {
        "next": f"/api/v1/timelines/home?limit=5&max_id={sids[24]}",
        "prev": f"/api/v1/timelines/home?limit=5&min_id={sids[20]}",
    }
    since = client.get(f"/api/v1/timelines/home?limit=5&since_id={sids[25]}")
    assert _ids(since) == sids[:5]
    both = client.get(
        f"/api/v1/timelines/home?limit=40&max_id={sids[10]}&since_id={sids[15]}"
    )
    assert _ids(both) == sids[11:15]
    # Catching up from the oldest, page after page upwards: every one, once.
    pages = _walk(client, "/api/v1/timelines/home?limit=20&min_id=1", rel="prev")
    assert [sid for p in reversed(pages) for sid in p] == sids


def test_limit_defaults_to_20_and_stops_at_40(home_of_50):
    client, sids = home_of_50
    assert len(_ids(client.get("/api/v1/timelines/home"))) == 20
    assert len(_ids(client.get("/api/v1/timelines/home?limit=100"))) == 40
    # Mastodon takes a negative limit's absolute value (`limit_param`), as docs say.
    assert len(_ids(client.get("/api/v1/timelines/home?limit=-3"))) == 3
    assert len(_ids(client.get("/api/v1/timelines/home?limit=-100"))) == 40
    assert client.get("/api/v1/timelines/home?max_id=x").status_code == 422


def test_the_home_needs_a_token():
    assert api_client().get("/api/v1/timelines/home").status_code == 401


def test_home_leaves_out_the_muted_and_reposts_of_the_blocked():
    alice, bob, carol, dave = (make_user(n) for n in ("alice", "bob", "carol", "dave"))
    for followee in (alice, carol, dave):
        _follow(bob, followee)
    kept = _post(alice, "from alice")
    muted = _post(carol, "from carol")
    social.status_repost(user=dave, sid=kept)
    blocked_post = _post(make_user("erin"), "from erin")
    reposted_blocked = social.status_repost(user=dave, sid=blocked_post).id
    run_jobs()
    home = _ids(_api(bob).get("/api/v1/timelines/home"))
    assert muted in home and reposted_blocked in home
    blocks.mute_create(user=bob, muted_id=carol.id)
    blocks.block_create(blocker=bob, blocked_id=user_get_named("erin").id)
    run_jobs()
    home = _ids(_api(bob).get("/api/v1/timelines/home"))
    assert muted not in home and reposted_blocked not in home
    # Alice's status shows once, though dave reposted it: at its newest.
    data = _api(bob).get("/api/v1/timelines/home").json()
    shown = [s["reblog"]["id"] if s["reblog"] else s["id"] for s in data]
    assert shown.count(str(kept)) == 1
    assert home == status_ids(page(logged_in_client("bob"), "/"))


def user_get_named(name: str):
    from accounts.selectors import user_get_by_username

    return user_get_by_username(username=name)


def test_favourited_and_reblogged_are_the_viewers_own_whatever_the_counts_say(
    settings,
):
    # As on the site's pages: the viewer's state is asked only where a count says
    # someone is there; a status never liked has no count field at all.
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    _follow(bob, alice)
    liked, others, undone, old = (_post(alice, t) for t in "abcd")
    get_redis().hdel(keys.status(old), "likes", "reposts", "replies")
    social.status_like(user=bob, sid=liked)
    social.status_like(user=carol, sid=others)
    social.status_repost(user=carol, sid=others)
    social.status_like(user=bob, sid=undone)
    social.status_unlike(user=bob, sid=undone)
    run_jobs()

    def state(path: str) -> dict[str, tuple]:
        response = _api(bob).get(path)
        assert response.status_code == 200, response.content
        return {
            s["content"]: (
                s["favourites_count"],
                s["reblogs_count"],
                s["favourited"],
                s["reblogged"],
            )
            for s in response.json()
            if s["reblog"] is None and s["account"]["acct"] == "alice"
        }

    expected = {
        "<p>a</p>": (1, 0, True, False),
        "<p>b</p>": (1, 1, False, False),
        "<p>c</p>": (0, 0, False, False),
        "<p>d</p>": (0, 0, False, False),
    }
    for path in ("/api/v1/timelines/home", "/api/v1/timelines/public"):
        assert state(path) == expected, path
    social.status_like(user=bob, sid=old)
    social.status_repost(user=bob, sid=old)
    run_jobs()
    # Bob's home holds the original just below his repost: it shows the original
    # (HOME_REPOST_FALLOFF), with his state.
    timeline = _api(bob).get("/api/v1/timelines/home").json()
    assert [s["reblog"] for s in timeline] == [None] * 4
    (shown,) = [s for s in timeline if s["id"] == str(old)]
    assert (shown["favourited"], shown["reblogged"]) == (True, True)
    settings.HOME_REPOST_FALLOFF = 0  # every repost shows
    timeline = _api(bob).get("/api/v1/timelines/home").json()
    (wrapper,) = [s for s in timeline if s["reblog"] is not None]
    assert wrapper["reblog"]["id"] == str(old)
    assert (wrapper["reblog"]["favourited"], wrapper["reblog"]["reblogged"]) == (
        True,
        True,
    )


def test_a_repost_nests_its_original_with_counts_and_the_viewers_state():
    alice, bob = make_user("alice"), make_user("bob")
    _follow(bob, alice)
    sid = _post(alice, "an original #tag")
    social.status_like(user=bob, sid=sid)
    carol = make_user("carol")  # whom bob does not follow
    repost = social.status_repost(user=alice, sid=_post(carol, "carol's"))
    run_jobs()
    data = {s["id"]: s for s in _api(bob).get("/api/v1/timelines/home").json()}
    original = data[str(sid)]
    assert original["favourited"] is True and original["favourites_count"] == 1
    assert [t["name"] for t in original["tags"]] == ["tag"]
    wrapper = data[str(repost.id)]
    assert wrapper["account"]["acct"] == "alice"
    assert wrapper["reblog"]["account"]["acct"] == "carol"
    assert wrapper["reblog"]["reblogs_count"] == 1
    assert wrapper["content"] == ""


def test_pulled_authors_are_merged_into_the_home_window(settings):
    settings.FANOUT_PUSH_MAX = 2
    star, bob = make_user("star"), make_user("bob")
    for fan in [bob, *(make_user(f"fan{i}") for i in range(3))]:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    friend = make_user("friend")
    _follow(bob, friend)
    sids = []
    for i in range(10):
        sids.append(_post(star, f"star {i}"))
        sids.append(_post(friend, f"friend {i}"))
    run_jobs()
    sids.sort(reverse=True)
    assert get_redis().zrange(keys.pulls(bob.id), 0, -1) == [str(star.id)]
    client = _api(bob)
    pages = _walk(client, "/api/v1/timelines/home?limit=6")
    assert [sid for p in pages for sid in p] == sids
    assert (
        _ids(client.get(f"/api/v1/timelines/home?limit=4&min_id={sids[9]}"))
        == (sids[5:9])
    )
    assert _ids(client.get("/api/v1/timelines/home?limit=30")) == status_ids(
        page(logged_in_client("bob"), "/")
    )


def test_the_public_timeline_is_everyones_but_across_a_block():
    alice, bob = make_user("alice"), make_user("bob")
    sid = _post(alice, "for all #news")
    bob_sid = _post(bob, "bob too")
    run_jobs()  # a tag's timeline is the post job's
    everyone = _ids(api_client().get("/api/v1/timelines/public"))
    assert everyone == [bob_sid, sid]
    assert _ids(api_client().get("/api/v1/timelines/public?local=true")) == everyone
    assert _ids(api_client().get("/api/v1/timelines/public?remote=true")) == []
    assert _ids(api_client().get("/api/v1/timelines/tag/News")) == [sid]
    assert _ids(api_client().get("/api/v1/timelines/tag/nothing")) == []
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    run_jobs()
    assert _ids(_api(bob).get("/api/v1/timelines/public")) == [bob_sid]
    assert _ids(_api(bob).get("/api/v1/timelines/tag/news")) == []
    assert _ids(_api(alice).get("/api/v1/timelines/public")) == [sid]
    # Mutes do not apply there (as on the site's global page).
    carol = make_user("carol")
    blocks.mute_create(user=carol, muted_id=alice.id)
    assert sid in _ids(_api(carol).get("/api/v1/timelines/public"))


def test_public_and_tag_windows_page_both_ways():
    alice = make_user("alice")
    sids = [_post(alice, f"#many {i}") for i in range(12)][::-1]
    run_jobs()
    for path in ("/api/v1/timelines/public", "/api/v1/timelines/tag/many"):
        pages = _walk(api_client(), f"{path}?limit=5")
        assert [sid for p in pages for sid in p] == sids
        up = _walk(api_client(), f"{path}?limit=5&min_id=1", rel="prev")
        assert [sid for p in reversed(up) for sid in p] == sids
        assert _ids(api_client().get(f"{path}?limit=3&min_id={sids[6]}")) == (sids[3:6])


def test_a_private_accounts_statuses_only_for_approved_followers():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    privacy.account_privacy_set(user=alice, private=True)
    run_jobs()
    alice = user_get(uid=alice.id)
    sid = _post(alice, "private #secret")
    run_jobs()
    services.follow_ask(follower=bob, followee_id=alice.id)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    run_jobs()
    path = f"/api/v1/accounts/{alice.id}/statuses"
    assert _ids(_api(bob).get(path)) == [sid]
    assert _ids(_api(alice).get(path)) == [sid]
    assert _ids(_api(carol).get(path)) == []
    assert _ids(api_client().get(path)) == []
    assert sid in _ids(_api(bob).get("/api/v1/timelines/home"))
    for viewer in (bob, carol):
        assert sid not in _ids(_api(viewer).get("/api/v1/timelines/public"))
        assert sid not in _ids(_api(viewer).get("/api/v1/timelines/tag/secret"))


def test_an_accounts_statuses_with_mastodons_filters():
    alice, bob, blocked = make_user("alice"), make_user("bob"), make_user("zed")
    own = _post(alice, "mine #one")
    other = _post(bob, "bob's")
    reply_other = social.status_reply(author=alice, sid=other, text="@bob yes").id
    reply_self = social.status_reply(author=alice, sid=own, text="more").id
    repost = social.status_repost(user=alice, sid=other).id
    zed_sid = _post(blocked, "zed's")
    repost_zed = social.status_repost(user=alice, sid=zed_sid).id
    path = f"/api/v1/accounts/{alice.id}/statuses"
    everything = [repost_zed, repost, reply_self, reply_other, own]
    assert _ids(api_client().get(path)) == everything
    assert _ids(api_client().get(f"{path}?exclude_replies=true")) == [
        repost_zed,
        repost,
        reply_self,
        own,
    ]
    assert _ids(api_client().get(f"{path}?exclude_reblogs=1")) == [
        reply_self,
        reply_other,
        own,
    ]
    assert _ids(api_client().get(f"{path}?tagged=ONE")) == [own]
    assert _ids(api_client().get(f"{path}?pinned=true")) == []
    assert _ids(api_client().get(f"{path}?only_media=true")) == []
    pages = _walk(api_client(), f"{path}?limit=2&exclude_replies=1")
    assert [sid for p in pages for sid in p] == [repost_zed, repost, reply_self, own]
    blocks.block_create(blocker=bob, blocked_id=blocked.id)
    run_jobs()
    assert _ids(_api(bob).get(path)) == everything[1:]
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    run_jobs()
    assert _ids(_api(bob).get(path)) == []
    assert api_client().get("/api/v1/accounts/999999/statuses").status_code == 404


def test_a_timeline_read_again_shows_what_changed_since(settings):
    # Statuses and accounts are parsed once a process (`Status.from_read`,
    # `selectors._account_read`): a read after a like, a repost, a new name or a
    # new follower shows them.
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    _follow(bob, alice)
    sid = _post(alice, "counted")
    run_jobs()
    client = _api(bob)
    for path in (
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        f"/api/v1/accounts/{alice.id}/statuses",
    ):
        client.get(path)  # parsed once
    social.status_like(user=bob, sid=sid)
    social.status_repost(user=carol, sid=sid)
    accounts_services.profile_update(user=alice, name="Alice A.", bio="")
    _follow(carol, alice)
    for path in (
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        f"/api/v1/accounts/{alice.id}/statuses",
    ):
        shown = next(s for s in client.get(path).json() if s["id"] == str(sid))
        assert shown["favourited"] is True, path
        assert (shown["favourites_count"], shown["reblogs_count"]) == (1, 1), path
        assert shown["account"]["display_name"] == "Alice A.", path
        assert shown["account"]["followers_count"] == 2, path


def _round_trips(client, path: str) -> int:
    client.get(path)  # warm: connections, scripts
    with RoundTripCounter() as counter:
        assert client.get(path).status_code == 200
    assert counter.most_per_node <= 1
    return counter.count


@pytest.mark.real_redis
def test_timelines_cost_one_round_trip_on_one_server_three_on_a_cluster():
    authors = [make_user(f"author{i}") for i in range(6)]
    bob = make_user("bob")
    for author in authors:
        _follow(bob, author)
    for i in range(40):
        sid = _post(authors[i % 6], f"#counted {i}")
        if i % 5 == 0:
            social.status_repost(user=authors[(i + 1) % 6], sid=sid)
    run_jobs()
    # On one server a window read downwards comes with its statuses, their
    # authors' accounts and reposts' originals, and the token's check; read
    # upwards (`min_id`) it reads its ids first. A Cluster reads the statuses in
    # one more round trip, and the accounts and originals in one more.
    down = 3 if is_cluster() else 1
    up = 3 if is_cluster() else 2
    client = _api(bob)
    for path, expected in (
        ("/api/v1/timelines/home?limit=30", down),
        ("/api/v1/timelines/home?limit=30&max_id=999999999999999", down),
        ("/api/v1/timelines/home?limit=30&since_id=1", down),
        ("/api/v1/timelines/public?limit=30", down),
        ("/api/v1/timelines/tag/counted?limit=30", down),
        (f"/api/v1/accounts/{authors[1].id}/statuses?limit=30", down),
        ("/api/v1/timelines/home?limit=30&min_id=1", up),
        ("/api/v1/timelines/public?limit=30&min_id=1", up),
    ):
        assert _round_trips(client, path) == expected, path
    assert _round_trips(api_client(), "/api/v1/timelines/public?limit=30") == down


@pytest.mark.real_redis
def test_mentions_of_people_off_the_page_cost_no_round_trip_more():
    """A page whose statuses (or reposts' originals) mention someone who posted
    nothing on it names them as their Account does: on one server in the window's
    own round trip, on a Cluster in the accounts' one (a repost's original's, in one
    more). A mentioned account that is being deleted, or is gone, is left out of
    the Mentions, at no cost either."""
    alice = make_user("Alice")
    bob, carol, dave = make_user("bob"), make_user("carol"), make_user("Dave")
    _follow(carol, bob)
    _post(bob, "hi @bob")
    run_jobs()
    client = _api(carol)
    down = 3 if is_cluster() else 1
    assert _round_trips(client, "/api/v1/timelines/home?limit=30") == down
    _post(bob, "hi @ALICE")
    run_jobs()
    assert _round_trips(client, "/api/v1/timelines/home?limit=30") == down
    newest = client.get("/api/v1/timelines/home").json()[0]
    assert [m["username"] for m in newest["mentions"]] == ["Alice"]
    assert [m["id"] for m in newest["mentions"]] == [str(alice.id)]
    # A repost of a status that mentions someone else: the original's Mentions.
    eve = make_user("eve")
    reposted = _post(eve, "look @dave")
    social.status_repost(user=bob, sid=reposted)
    run_jobs()
    # A Cluster reads the original with the accounts, and whom it mentions after.
    down = 4 if is_cluster() else 1
    assert _round_trips(client, "/api/v1/timelines/home?limit=30") == down
    newest = client.get("/api/v1/timelines/home").json()[0]
    assert newest["reblog"]["id"] == str(reposted)
    assert [m["username"] for m in newest["reblog"]["mentions"]] == ["Dave"]
    assert [m["id"] for m in newest["reblog"]["mentions"]] == [str(dave.id)]
    # Alice's account deleted: her job pending, then done.
    services.account_delete(user=alice, password=PASSWORD, client="127.0.0.1")
    for _ in range(2):
        assert _round_trips(client, "/api/v1/timelines/home?limit=30") == down
        shown = client.get("/api/v1/timelines/home").json()
        mentioning = next(s for s in shown if "ALICE" in s["content"])
        assert mentioning["mentions"] == []
        run_jobs()


def test_a_home_walked_up_or_down_shows_the_same_past_a_pulled_outboxs_floor(
    settings,
):
    settings.FANOUT_PUSH_MAX = 2
    settings.HOME_TIMELINE_CAP = 6  # an outbox keeps a pulled author's newest 6
    star, bob = make_user("star"), make_user("bob")
    for fan in [bob, *(make_user(f"fan{i}") for i in range(3))]:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    friend = make_user("friend")
    _follow(bob, friend)
    # The outbox keeps star 4..9; a pushed status of friend's sits among them.
    for i in range(4):
        _post(friend, f"friend {i}")
    stars = [_post(star, f"star {i}") for i in range(6)]
    between = _post(friend, "friend between")
    stars += [_post(star, f"star {i}") for i in range(6, 10)]
    run_jobs()
    client = _api(bob)
    down = [s for p in _walk(client, "/api/v1/timelines/home?limit=3") for s in p]
    # Nothing below the outbox's floor shows (the site's rule), either way: read
    # upwards from below it, the window starts at the floor and skips nothing.
    # Ids of two authors follow time to within a tick or two (`timeline.ids`): on
    # a loaded machine friend's "between" can come out just below star's 5th, the
    # floor, and then rightly does not show.
    floor = stars[4]
    expected = [*stars[4:], *([between] if between > floor else [])]
    assert down == sorted(expected, reverse=True)
    up = _walk(client, "/api/v1/timelines/home?limit=3&min_id=1", rel="prev")
    assert [s for p in reversed(up) for s in p] == down


@pytest.mark.real_redis
def test_a_home_with_pulled_authors_costs_three_round_trips_on_one_server(settings):
    settings.FANOUT_PUSH_MAX = 2
    star, bob, carol = make_user("star"), make_user("bob"), make_user("carol")
    for fan in [bob, *(make_user(f"fan{i}") for i in range(3))]:
        services.follow_create(follower=fan, followee_id=star.id)
    run_jobs()
    liked = _post(star, "liked by bob")
    social.status_like(user=bob, sid=liked)
    social.status_reply(author=star, sid=_post(carol, "carol's"), text="@carol hi")
    social.status_repost(user=star, sid=_post(carol, "reposted"))
    run_jobs()
    client = _api(bob)
    data = {s["id"]: s for s in client.get("/api/v1/timelines/home").json()}
    # A pulled author's status shows its counts and the viewer's like.
    assert data[str(liked)]["favourites_count"] == 1
    assert data[str(liked)]["favourited"] is True
    # The pulled statuses' checks take a round trip (as on the site's home); their
    # counts and accounts ride in it; a Cluster reads those in one more.
    expected = 4 if is_cluster() else 3
    assert _round_trips(client, "/api/v1/timelines/home?limit=30") == expected


@pytest.mark.parametrize("damaged", ["{not json", "null", '{"bob":"x"}', "[[1]]"])
def test_a_damaged_mentions_field_names_nobody_and_fails_no_timeline(damaged):
    # As `Status` reads it (tests/timeline/test_mentions.py): no mentions.
    alice, bob = make_user("alice"), make_user("bob")
    _follow(bob, alice)
    sid = _post(alice, "hello @bob")
    run_jobs()
    get_redis().hset(keys.status(sid), "mentions", damaged)
    client = _api(bob)
    for path in (
        "/api/v1/timelines/home",
        "/api/v1/timelines/public",
        f"/api/v1/accounts/{alice.id}/statuses",
        f"/api/v1/statuses/{sid}",
    ):
        response = client.get(path)
        assert response.status_code == 200, path
        shown = response.json()
        entity = shown[0] if isinstance(shown, list) else shown
        assert (entity["id"], entity["mentions"]) == (str(sid), []), path
