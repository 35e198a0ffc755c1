"""A status reposted by people the reader follows shows once in their home, on
whichever page its original falls (Mastodon's REBLOG_FALLOFF rule: a repost is left
out of a home that holds its original at most HOME_REPOST_FALLOFF entries below
it); one older than that shows again, at the top. On the site's pages, the client
API's windows read either way, with a pulled author's reposts, on one server and a
Cluster."""

from __future__ import annotations

import re
import time

import pytest

from accounts.selectors import PageReads
from accounts.services import session_create
from config.redis import get_redis, is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import keys, selectors, services, social


@pytest.fixture(autouse=True)
def _small_pages(settings):
    settings.TIMELINE_PAGE_SIZE = 3
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"


def _walk_site(user) -> list[tuple[int, int]]:
    """Every page of the user's home, oldest last: (row id, original id) each."""
    rows, max_id = [], None
    for _ in range(30):
        home = selectors.home_get(
            reads=PageReads(session_create(uid=user.id)), max_id=max_id
        )
        rows += [(s.id, s.original_id) for s in home.page.statuses]
        max_id = home.page.next_max_id
        if max_id is None:
            return rows
    raise AssertionError("the pages never end")


def _walk_api(user, query: str) -> list[tuple[int, int]]:
    """Every window of the user's home through the client API, walked by its Link
    headers, newest first: (entity id, the reblogged status's id or its own)."""
    client = api_client(token_for(user))
    path = f"/api/v1/timelines/home?limit=3&{query}"
    rel = "prev" if "min_id" in query else "next"
    windows = []
    for _ in range(30):
        response = client.get(path)
        assert response.status_code == 200
        windows.append(
            [(int(s["id"]), int((s["reblog"] or s)["id"])) for s in response.json()]
        )
        links = dict(
            (name, url)
            for url, name in re.findall(
                r'<([^>]+)>; rel="(\w+)"', response.get("Link", "")
            )
        )
        if rel not in links:
            break
        path = links[rel]
    else:
        raise AssertionError("the windows never end")
    if rel == "prev":
        windows.reverse()
    return [row for window in windows for row in window]


@pytest.fixture
def reposted():
    """Dave follows alice and bob. Alice posts the original, then three more; bob
    reposts the original: dave's home holds, newest first, the repost, alice's
    three, the original."""
    alice, bob, dave = make_user("alice"), make_user("bob"), make_user("dave")
    for followee in (alice, bob):
        services.follow_create(follower=dave, followee_id=followee.id)
    original = services.status_create(author=alice, text="worth a repost")
    later = [services.status_create(author=alice, text=f"later {i}") for i in range(3)]
    # Ids follow time to the millisecond (`timeline.ids`): within the one alice's
    # last posts took, bob's repost could be numbered below them (seen twice on a
    # busy machine). A repost made later is, once a millisecond has passed.
    time.sleep(0.003)
    repost = social.status_repost(user=bob, sid=original.id)
    run_jobs()
    assert repost.id > max(s.id for s in later)
    return dave, original.id, [s.id for s in reversed(later)], repost.id, alice


def test_a_reposted_status_shows_once_where_its_original_came(r, reposted):
    dave, original, later, repost, _ = reposted
    expected = [(sid, sid) for sid in later] + [(original, original)]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


def test_a_repost_of_an_older_status_than_the_falloff_shows_at_the_top(
    r, reposted, settings
):
    settings.HOME_REPOST_FALLOFF = 3  # the original is 3 entries below the repost
    dave, original, later, repost, _ = reposted
    expected = [(repost, original)] + [(sid, sid) for sid in later]
    expected.append((original, original))
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


def test_a_pulled_authors_repost_shows_once_too(r, settings):
    settings.FANOUT_PUSH_MAX = 2  # bob, with three followers, is pulled
    alice, bob, dave = make_user("alice"), make_user("bob"), make_user("dave")
    for fan in [dave, make_user("fan1"), make_user("fan2")]:
        services.follow_create(follower=fan, followee_id=bob.id)
    services.follow_create(follower=dave, followee_id=alice.id)
    run_jobs()
    original = services.status_create(author=alice, text="worth a repost")
    later = [services.status_create(author=alice, text=f"later {i}") for i in range(3)]
    social.status_repost(user=bob, sid=original.id)
    run_jobs()
    expected = [(s.id, s.id) for s in reversed(later)] + [(original.id, original.id)]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected


def test_the_original_deleted_neither_it_nor_its_repost_shows(r, reposted):
    dave, original, later, repost, alice = reposted
    services.status_delete(user=alice, sid=original)  # its jobs not run yet
    assert _walk_site(dave) == [(sid, sid) for sid in later]
    run_jobs()
    assert _walk_site(dave) == [(sid, sid) for sid in later]


def test_a_repost_of_an_original_below_a_pulled_outboxs_floor_shows(r, settings):
    # Nothing below a pulled author's outbox floor shows (the site's rule): a
    # repost of an original below it shows, or the status would show nowhere.
    settings.FANOUT_PUSH_MAX = 2
    settings.HOME_TIMELINE_CAP = 6  # an outbox keeps a pulled author's newest 6
    star, bob = make_user("star"), make_user("bob")
    for fan in [bob, *(make_user(f"fan{i}") for i in range(3))]:
        services.follow_create(follower=fan, followee_id=star.id)
    friend, carol = make_user("friend"), make_user("carol")
    for followee in (friend, carol):
        services.follow_create(follower=bob, followee_id=followee.id)
    run_jobs()
    original = services.status_create(author=friend, text="worth a repost").id
    for i in range(7):
        services.status_create(author=star, text=f"star {i}")
    social.status_repost(user=carol, sid=original)
    run_jobs()
    # Once: by its repost, or by itself where an id of star's came no later (ids
    # follow time only to within a tick across authors: `timeline.ids`).
    for walk in (_walk_site(bob), _walk_api(bob, ""), _walk_api(bob, "min_id=1")):
        assert [o for _, o in walk].count(original) == 1, walk


@pytest.fixture
def pulled_original(settings):
    """Alice, with three followers, is pulled (her statuses reach dave's home from
    her outbox, at read); bob is pushed. Alice posts the original, then three more;
    bob reposts the original: dave's home shows, newest first, the repost, alice's
    three, the original."""
    settings.FANOUT_PUSH_MAX = 2
    alice, bob, dave = make_user("alice"), make_user("bob"), make_user("dave")
    for fan in [dave, make_user("fan1"), make_user("fan2")]:
        services.follow_create(follower=fan, followee_id=alice.id)
    services.follow_create(follower=dave, followee_id=bob.id)
    run_jobs()
    original = services.status_create(author=alice, text="worth a repost")
    later = [services.status_create(author=alice, text=f"later {i}") for i in range(3)]
    time.sleep(0.003)  # the repost numbered above alice's (see `reposted`)
    repost = social.status_repost(user=bob, sid=original.id)
    run_jobs()
    assert repost.id > max(s.id for s in later)
    return dave, alice, bob, original.id, [s.id for s in reversed(later)], repost.id


def test_a_pushed_authors_repost_of_a_pulled_original_shows_once(r, pulled_original):
    # The original, merged from alice's outbox, is 3 entries below the repost
    # (within the falloff): it shows there, the repost nowhere.
    dave, _, _, original, later, _ = pulled_original
    expected = [(sid, sid) for sid in later] + [(original, original)]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


def test_a_pushed_authors_repost_of_an_older_pulled_original_shows_at_the_top(
    r, pulled_original, settings
):
    settings.HOME_REPOST_FALLOFF = 3  # the original is 3 entries below the repost
    dave, _, _, original, later, repost = pulled_original
    expected = [(repost, original)] + [(sid, sid) for sid in later]
    expected.append((original, original))
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


def test_a_pulled_authors_repost_of_another_pulled_original_shows_once(
    r, pulled_original
):
    # Carol, with three followers too, is pulled: her repost, read from her outbox,
    # is checked against alice's outbox as bob's is.
    dave, alice, bob, original, later, _ = pulled_original
    carol = make_user("carol")
    for fan in [dave, make_user("fan3"), make_user("fan4")]:
        services.follow_create(follower=fan, followee_id=carol.id)
    run_jobs()
    social.status_unrepost(user=bob, sid=original)
    time.sleep(0.003)
    social.status_repost(user=carol, sid=original)
    run_jobs()
    expected = [(sid, sid) for sid in later] + [(original, original)]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


def test_a_repost_of_a_pulled_reply_the_home_leaves_out_shows(r, pulled_original):
    # Alice's reply to carol, whom dave does not follow, stays out of dave's home
    # (Mastodon's reply rule, as the fan-out would have kept it out): bob's repost
    # of it is where dave sees it, once.
    dave, alice, bob, _, _, _ = pulled_original
    carol = make_user("carol")
    asked = services.status_create(author=carol, text="a question")
    reply = services.status_create(author=alice, text="an answer", reply_to=asked)
    time.sleep(0.003)
    repost = social.status_repost(user=bob, sid=reply.id)
    run_jobs()
    for walk in (_walk_site(dave), _walk_api(dave, ""), _walk_api(dave, "min_id=1")):
        assert walk[0] == (repost.id, reply.id), walk
        assert [o for _, o in walk].count(reply.id) == 1, walk


def test_a_damaged_outbox_entry_leaves_its_status_out_and_the_pages_read(
    r, pulled_original
):
    # The outbox entry of alice's original is damaged (not JSON): the home's pages
    # still read (a damaged field fails no page, as elsewhere), without the status
    # it cannot read; bob's repost of it, not held below, shows it at the top.
    dave, alice, _, original, later, repost = pulled_original
    get_redis().hset(keys.outbox(alice.id), original, "not json{")
    expected = [(repost, original)] + [(sid, sid) for sid in later]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


def _round_trips(dave) -> dict[str, int]:
    """What the first page of dave's home costs, on the site and the client API
    (read downwards, and upwards)."""
    site = logged_in_client("dave")
    client = api_client(token_for(dave))
    counts = {}
    for name, get in (
        ("site", lambda: site.get("/")),
        ("api", lambda: client.get("/api/v1/timelines/home?limit=3")),
        ("api up", lambda: client.get("/api/v1/timelines/home?limit=3&min_id=1")),
    ):
        get()  # warm: connections, scripts
        with RoundTripCounter() as counter:
            assert get().status_code == 200
        assert counter.most_per_node <= 1
        counts[name] = counter.count
    return counts


@pytest.mark.real_redis
def test_the_check_against_pulled_outboxes_costs_no_round_trip(r, pulled_original):
    # The reposts of a pulled author's statuses are checked in a round trip the
    # page takes anyway: on one server the one that reads the pulled authors'
    # outboxes, on a Cluster the one that reads the authors' cards (bob's, for
    # his repost). The counts the home cost before the check.
    dave = pulled_original[0]
    assert _round_trips(dave) == {
        "site": 3 if is_cluster() else 2,
        "api": 3,
        "api up": 3,
    }


def test_a_repost_of_a_pulled_reply_to_someone_followed_shows_once(r, pulled_original):
    # Alice's reply to carol, whom dave follows, is in dave's home (the reply rule
    # lets it in, as the fan-out would have), three of alice's statuses below bob's
    # repost of it (within the falloff, on the next page): the repost is left out
    # and dave reads the reply once, as itself.
    dave, alice, bob, _, _, _ = pulled_original
    carol = make_user("carol")
    services.follow_create(follower=dave, followee_id=carol.id)
    run_jobs()
    asked = services.status_create(author=carol, text="a question")
    time.sleep(0.003)  # the reply numbered above carol's question
    reply = services.status_create(author=alice, text="an answer", reply_to=asked)
    more = [services.status_create(author=alice, text=f"more {i}") for i in range(3)]
    time.sleep(0.003)
    social.status_repost(user=bob, sid=reply.id)
    run_jobs()
    expected = [(s.id, s.id) for s in [*reversed(more), reply, asked]]
    for walk in (_walk_site(dave), _walk_api(dave, ""), _walk_api(dave, "min_id=1")):
        assert walk[:5] == expected, walk
        assert [o for _, o in walk].count(reply.id) == 1, walk


@pytest.mark.real_redis
def test_the_follow_deciding_a_pulled_replys_place_costs_no_round_trip(
    r, pulled_original
):
    # Bob's repost of alice's reply to carol (whom dave follows) tops dave's home:
    # on one server the check's script asks dave's follow of carol itself; on a
    # Cluster the reply's entry comes from alice's slot, and the follow is asked
    # in a round trip the page takes anyway (the site's cards, the client API's
    # accounts), only where the repost is on the page (not read upwards here).
    # The counts are those the pages cost before the check (measured on the code
    # before it): the site's one more than the fixture's alone on one server, the
    # merge asking whether dave follows carol (`_pulled_checked`).
    dave, alice, bob, _, _, _ = pulled_original
    carol = make_user("carol")
    services.follow_create(follower=dave, followee_id=carol.id)
    run_jobs()
    asked = services.status_create(author=carol, text="a question")
    reply = services.status_create(author=alice, text="an answer", reply_to=asked)
    for i in range(3):
        services.status_create(author=alice, text=f"more {i}")
    time.sleep(0.003)
    social.status_repost(user=bob, sid=reply.id)
    run_jobs()
    assert _round_trips(dave) == {
        "site": 4 if is_cluster() else 3,
        "api": 4 if is_cluster() else 3,
        "api up": 3,
    }


def _replies_between(settings, follows_carol: bool):
    """Alice (pulled) posts the original, three replies to carol, then three more;
    bob reposts the original. Dave follows carol or not."""
    settings.FANOUT_PUSH_MAX = 2
    settings.HOME_REPOST_FALLOFF = 5
    alice, bob, dave = make_user("alice"), make_user("bob"), make_user("dave")
    carol = make_user("carol")
    for fan in [dave, make_user("fan1"), make_user("fan2")]:
        services.follow_create(follower=fan, followee_id=alice.id)
    services.follow_create(follower=dave, followee_id=bob.id)
    if follows_carol:
        services.follow_create(follower=dave, followee_id=carol.id)
    run_jobs()
    asked = services.status_create(author=carol, text="a question")
    time.sleep(0.003)  # the original numbered above carol's question
    original = services.status_create(author=alice, text="worth a repost").id
    answers = [
        services.status_create(author=alice, text=f"answer {i}", reply_to=asked)
        for i in range(3)
    ]
    later = [services.status_create(author=alice, text=f"later {i}") for i in range(3)]
    time.sleep(0.003)
    repost = social.status_repost(user=bob, sid=original).id
    run_jobs()
    return (
        dave,
        asked.id,
        original,
        [s.id for s in answers],
        [s.id for s in later],
        repost,
    )


def test_a_pulled_authors_replies_the_home_leaves_out_do_not_push_a_repost_up(
    r, settings
):
    # The replies to carol, whom dave does not follow, stay out of dave's home (the
    # reply rule), so bob's repost comes three entries above the original there,
    # within the falloff (the original on the next page): left out, the original
    # shown once.
    dave, _, original, _, later, _ = _replies_between(settings, follows_carol=False)
    expected = [(sid, sid) for sid in reversed(later)] + [(original, original)]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


def test_a_pulled_authors_replies_the_home_shows_count_in_the_falloff(r, settings):
    # Dave follows carol: the three replies are in his home, so the original is six
    # entries below bob's repost, beyond the falloff: the repost shows at the top
    # and the original again where it falls (Mastodon's rule).
    dave, asked, original, answers, later, repost = _replies_between(
        settings, follows_carol=True
    )
    expected = [(repost, original)]
    expected += [(sid, sid) for sid in [*reversed(later), *reversed(answers)]]
    expected += [(original, original), (asked, asked)]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected


@pytest.mark.real_redis
@pytest.mark.parametrize("follows_carol", [False, True])
def test_counting_the_replies_the_home_shows_costs_no_round_trip(
    r, settings, follows_carol
):
    # The replies between bob's repost and alice's original are read and their
    # follows asked in the round trips the page took before (measured on the code
    # before): on one server the check's script asks them itself; on a Cluster
    # each pulled author's count rides with the outbox reads, and the follows with
    # the cards (the site's) or the accounts (the client API's).
    dave = _replies_between(settings, follows_carol=follows_carol)[0]
    trips = 4 if is_cluster() else 3
    assert _round_trips(dave) == {"site": trips, "api": trips, "api up": trips}


def test_one_pulled_authors_many_left_out_replies_count_as_on_one_server(r, settings):
    # Alice and erin are both pulled; between alice's original and bob's repost of
    # it erin answers carol, whom dave does not follow, four times: none of it is
    # in dave's home, so the original comes right below the repost (within the
    # falloff, 2): the repost is left out, the original shown once. The check reads
    # REPOST_FALLOFF_SCAN x 2 = 4 entries, erin's four, on one server as on a
    # Cluster (whose share for each pulled author read only 2 of them, counting the
    # other two as shown: the repost at the top and the original again below).
    settings.FANOUT_PUSH_MAX = 2
    settings.HOME_REPOST_FALLOFF = 2
    alice, erin, bob = make_user("alice"), make_user("erin"), make_user("bob")
    dave, carol = make_user("dave"), make_user("carol")
    for fan in [dave, make_user("fan1"), make_user("fan2")]:
        for busy in (alice, erin):
            services.follow_create(follower=fan, followee_id=busy.id)
    services.follow_create(follower=dave, followee_id=bob.id)
    run_jobs()
    asked = services.status_create(author=carol, text="a question")
    time.sleep(0.003)
    original = services.status_create(author=alice, text="worth a repost").id
    for i in range(4):
        services.status_create(author=erin, text=f"answer {i}", reply_to=asked)
    time.sleep(0.003)
    social.status_repost(user=bob, sid=original)
    run_jobs()
    expected = [(original, original)]
    assert _walk_site(dave) == expected
    assert _walk_api(dave, "") == expected
    assert _walk_api(dave, "min_id=1") == expected
