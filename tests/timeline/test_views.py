from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from django.conf import settings
from django.test import Client

from accounts import keys as account_keys
from accounts.selectors import user_get_by_username
from config.redis import get_redis, is_cluster
from tests.helpers import logged_in_client, make_away, make_user, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import keys, services


def status_ids(html: str) -> list[int]:
    return [int(x) for x in re.findall(r'data-status-id="(\d+)"', html)]


def body(response) -> str:
    return response.content.decode()


@pytest.fixture
def alice():
    make_user("alice")
    return logged_in_client("alice")


@pytest.fixture
def bob():
    make_user("bob")
    return logged_in_client("bob")


def test_post_from_compose_form_shows_on_home_profile_and_global(alice):
    home = body(alice.get("/"))
    assert 'action="/post/"' in home and 'name="text"' in home
    response = alice.post("/post/", {"text": "Hello\nworld <3"})
    assert response.status_code == 302
    for url in ("/", "/u/alice/", "/timeline/"):
        page = body(alice.get(url))
        assert len(status_ids(page)) == 1
        assert "Hello<br>world &lt;3" in page
        assert 'href="/u/alice/">@alice</a>' in page
        assert re.search(r'<time datetime="\d{4}-\d\d-\d\dT[^"]+"', page)


def test_invisible_only_post_refused_with_message(alice, r):
    response = alice.post("/post/", {"text": "\u3164\u200b\ufeff"})
    assert response.status_code == 400
    assert "Write something first." in body(response)
    assert not list(r.scan_iter(match="status:*"))


def test_blank_and_too_long_posts_refused_with_message(alice, r):
    blank = alice.post("/post/", {"text": "   "})
    assert blank.status_code == 400 and "Write something first." in body(blank)
    long = alice.post("/post/", {"text": "é" * 281})
    assert long.status_code == 400
    assert "at most 280 characters (this one has 281)" in body(long)
    assert "é" * 281 in body(long)  # what was typed is not lost
    assert not list(r.scan_iter(match="status:*"))


def compose_next(html: str) -> str:
    form = html.split('class="card compose"')[1]
    return re.search(r'name="next" value="([^"]*)"', form).group(1)


@pytest.mark.parametrize("origin", ["/", "/u/alice/"])
def test_fixing_a_refused_post_returns_to_where_it_was_written(alice, origin):
    # The error page is served at the form's target (/post/); its compose box must
    # still send the author back where they were, not to /post/ (a 405 page).
    refused = alice.post("/post/", {"text": " ", "next": origin})
    assert refused.status_code == 400
    assert compose_next(body(refused)) == origin
    fixed = alice.post("/post/", {"text": "fixed", "next": compose_next(body(refused))})
    assert fixed.status_code == 302 and fixed["Location"] == origin
    assert alice.get(fixed["Location"]).status_code == 200
    assert "fixed" in body(alice.get(origin))


SERVER_ERROR = """
import django
django.setup()
from django.test import Client
import timeline.selectors

def broken(**kwargs):
    raise RuntimeError("the selector broke")

timeline.selectors.global_page = broken
response = Client(raise_request_exception=False).get("/timeline/")
print(response.status_code)
"""


def test_a_server_error_is_logged_with_its_traceback():
    # What an operator sees on the server's stderr with production settings.
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "false",
        "SECRET_KEY": "test-" + "x" * 50,
        "ALLOWED_HOSTS": "testserver",
        "SECURE_SSL_REDIRECT": "false",
    }
    run = subprocess.run(
        [sys.executable, "-c", SERVER_ERROR],
        cwd=settings.BASE_DIR,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.stdout.strip() == "500", run.stderr
    assert "Traceback" in run.stderr
    assert "RuntimeError: the selector broke" in run.stderr


def test_post_requires_login_and_post_method(alice):
    response = Client().post("/post/", {"text": "anon"})
    assert response.status_code == 302 and response["Location"] == "/login/?next=%2F"
    assert Client().get("/u/alice/followers/?cursor=5").status_code == 200
    assert alice.get("/post/").status_code == 405


def test_status_page_and_delete_by_author_only(alice, bob):
    alice.post("/post/", {"text": "mine"})
    sid = status_ids(body(alice.get("/")))[0]
    page = body(bob.get(f"/s/{sid}/"))
    assert "mine" in page and f'action="/s/{sid}/delete/"' not in page
    assert f'action="/s/{sid}/delete/"' in body(alice.get(f"/s/{sid}/"))
    assert bob.post(f"/s/{sid}/delete/").status_code == 403
    assert alice.post(f"/s/{sid}/delete/").status_code == 302
    assert alice.get(f"/s/{sid}/").status_code == 404
    assert status_ids(body(alice.get("/timeline/"))) == []
    assert alice.post(f"/s/{sid}/delete/").status_code == 404


def test_delete_is_visible_in_followers_homes(alice, bob):
    bob.post("/u/alice/follow/")
    alice.post("/post/", {"text": "soon gone"})
    run_jobs()
    sid = status_ids(body(bob.get("/")))[0]
    alice.post(f"/s/{sid}/delete/")
    assert status_ids(body(bob.get("/"))) == []  # at once, before the job runs
    assert run_jobs() == 2  # the removal from homes, the unlink (timeline.social)
    assert status_ids(body(bob.get("/"))) == []


@pytest.mark.parametrize("url", ["/s/abc/", "/s/99999/", "/s/99999999999999999999/"])
def test_bad_status_ids_are_404(url):
    assert Client().get(url).status_code == 404


@pytest.mark.parametrize("query", ["?max_id=abc", "?max_id=-1", "?max_id=1e5"])
def test_bad_cursor_is_404_not_500(query):
    assert Client().get("/timeline/" + query).status_code == 404


def test_follow_shows_posts_on_home_and_unfollow_removes_them(alice, bob):
    alice.post("/post/", {"text": "from alice"})
    assert status_ids(body(bob.get("/"))) == []
    profile = body(bob.get("/u/alice/"))
    assert 'action="/u/alice/follow/"' in profile
    assert bob.post("/u/alice/follow/").status_code == 302
    assert len(status_ids(body(bob.get("/")))) == 1
    profile = body(bob.get("/u/alice/"))
    assert 'action="/u/alice/unfollow/"' in profile
    assert "<strong>1</strong> follower" in profile
    bob.post("/u/alice/unfollow/")
    assert status_ids(body(bob.get("/"))) == []
    assert "<strong>0</strong> followers" in body(bob.get("/u/alice/"))


def test_follow_self_refused_unknown_user_404(alice):
    response = alice.post("/u/alice/follow/", follow=True)
    assert "You cannot follow yourself." in body(response)
    assert alice.post("/u/nobody/follow/").status_code == 404
    assert alice.get("/u/nobody/").status_code == 404
    assert alice.get("/u/bad%20name/").status_code == 404


def test_follow_requires_post(alice, bob):
    assert bob.get("/u/alice/follow/").status_code == 405


def test_profile_shows_people_in_common(alice, bob):
    for name in ("carol", "dave", "erin", "fred"):
        make_user(name)
        client = logged_in_client(name)
        client.post("/u/alice/follow/")
        bob.post(f"/u/{name}/follow/")
    page = body(bob.get("/u/alice/"))
    assert "Followed by" in page and "(4 in all)" in page
    assert len(re.findall(r'class="muted in-common">.*?</p>', page, re.S)) == 1
    assert "and 1 other you follow" in page


def test_people_in_common_are_counted_among_a_bounded_number_of_follows(
    alice, bob, settings
):
    # However many people the viewer follows, a profile checks only their newest
    # PROFILE_IN_COMMON_SCAN follows, and says so.
    settings.PROFILE_IN_COMMON_SCAN = 3
    for name in ("carol", "dave", "erin", "fred", "gina"):  # bob follows in order
        make_user(name)
        if name in ("carol", "dave", "fred"):
            logged_in_client(name).post("/u/alice/follow/")
        bob.post(f"/u/{name}/follow/")
    page = body(bob.get("/u/alice/"))
    common = re.search(r'class="muted in-common">(.*?)</p>', page, re.S).group(1)
    # Scanned: gina, fred, erin (newest first); of those only fred follows alice.
    assert "@fred" in common and "@carol" not in common and "@dave" not in common
    assert "among the 3 you followed most recently" in " ".join(common.split())
    settings.PROFILE_IN_COMMON_SCAN = 10
    common = re.search(
        r'class="muted in-common">(.*?)</p>', body(bob.get("/u/alice/")), re.S
    ).group(1)
    assert "(3 in all)" in common


def test_followers_and_following_pages(alice, bob, settings):
    bob.post("/u/alice/follow/")
    assert 'href="/u/bob/"' in body(alice.get("/u/alice/followers/"))
    assert 'href="/u/alice/"' in body(alice.get("/u/bob/following/"))
    assert alice.get("/u/ghost/followers/").status_code == 404


def test_older_link_pages_without_repeats(alice, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    for i in range(7):
        alice.post("/post/", {"text": f"n{i}"})
    seen: list[int] = []
    url = "/"
    while url:
        page = body(alice.get(url))
        seen += status_ids(page)
        match = re.search(r'<a rel="next"[^>]*href="([^"]+)"', page)
        url = "/" + match.group(1).replace("&amp;", "&") if match else None
    assert len(seen) == 7 and seen == sorted(seen, reverse=True)


def test_untrusted_text_is_escaped_everywhere(alice, bob):
    alice.post("/post/", {"text": '<script>alert("x")</script>'})
    bob.post("/u/alice/follow/")
    for url in ("/", "/timeline/", "/u/alice/"):
        page = body(bob.get(url))
        assert "<script>alert" not in page
        assert "&lt;script&gt;alert" in page


def count_round_trips(client: Client, url: str) -> int:
    client.get(url)  # warm: connections open, scripts loaded, the name cache filled
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    assert counter.most_per_node <= 1  # on a Cluster: one request per node per trip
    return counter.count


@pytest.mark.real_redis
@pytest.mark.parametrize("posts", [1, 30, 90])
def test_a_page_costs_a_constant_number_of_round_trips(alice, bob, posts):
    author = user_get_by_username(username="alice")
    for i in range(posts):
        services.status_create(author=author, text=f"status {i}")
    bob.post("/u/alice/follow/")
    for name in ("carol", "dave"):  # people bob follows who follow alice too
        make_user(name)
        logged_in_client(name).post("/u/alice/follow/")
        bob.post(f"/u/{name}/follow/")
    # On one server a home's statuses ride with the auth check: one round trip
    # (`timeline.selectors._WINDOW_READ`). On a Cluster they cost a second, and
    # others' cards a third (`timeline.selectors._STATUSES_READ`).
    assert count_round_trips(bob, "/") == (3 if is_cluster() else 1)
    # So do the global timeline's (one script over its partitions), and a tag's.
    public = 3 if is_cluster() else 1
    assert count_round_trips(bob, "/timeline/") == public
    services.status_create(author=author, text="about #rounds")
    run_jobs()  # a tag page lists what the post's job added
    assert body(bob.get("/tags/rounds/")).count('<li class="status"') == 1
    assert count_round_trips(bob, "/tags/rounds/") == public
    profile = body(bob.get("/u/alice/"))
    assert "Followed by" in profile and "(2 in all)" in profile
    # A profile's statuses and people in common ride with the auth check too.
    assert count_round_trips(bob, "/u/alice/") == (2 if is_cluster() else 1)
    # A people list reads its people and the Follow buttons with the auth check.
    followers = count_round_trips(bob, "/u/alice/followers/")
    assert followers == (2 if is_cluster() else 1)
    assert count_round_trips(Client(), "/timeline/") == public
    make_user("newcomer")  # an empty home suggests people, in the same two
    newcomer = logged_in_client("newcomer")
    assert "People to follow" in body(newcomer.get("/"))
    assert count_round_trips(newcomer, "/") == 2
    sid = int(get_redis().zrange(keys.posts(author.id), 0, 0)[0])
    # The second asks the author's slot whether they are private and the viewer
    # an approved follower (`timeline.privacy`); their own status needs no second.
    assert count_round_trips(bob, f"/s/{sid}/") == 2


def test_new_users_empty_home_explains_and_suggests_popular_people(alice, bob):
    make_user("carol")
    logged_in_client("carol").post("/u/alice/follow/")
    bob.post("/u/alice/follow/")
    newcomer = make_user("newbie")
    client = logged_in_client(newcomer.username)
    page = body(client.get("/"))
    assert "Your home is empty" in page
    assert 'action="/u/alice/follow/"' in page
    client.post("/u/alice/follow/")
    page = body(client.get("/"))
    assert 'action="/u/alice/follow/"' not in page


@pytest.mark.real_redis
def test_pages_recover_when_the_server_forgets_its_scripts(alice, r):
    alice.post("/post/", {"text": "still here"})
    r.script_flush()
    assert status_ids(body(alice.get("/timeline/"))) != []
    assert "still here" in body(alice.get("/"))
    r.script_flush()
    assert alice.post("/post/", {"text": "posted after a flush"}).status_code == 302
    assert "posted after a flush" in body(alice.get("/"))


def test_remembered_names_never_outlive_a_replaced_store(alice, bob, r):
    make_user("carol")
    logged_in_client("carol").post("/u/alice/follow/")
    bob.post("/u/carol/follow/")
    assert "@carol" in body(bob.get("/u/alice/"))  # the process learns the names
    r.flushall()
    for name in ("carol", "alice", "bob", "zoe"):  # same names, other ids
        make_user(name)
    zoe = logged_in_client("zoe")
    logged_in_client("bob").post("/u/alice/follow/")
    zoe.post("/u/bob/follow/")
    page = body(zoe.get("/u/alice/"))
    assert 'href="/u/bob/">@bob</a> you follow (1 in all)' in page
    assert "@carol" not in page


def test_a_reader_back_after_a_long_absence_gets_a_rebuilt_home(r, alice, bob):
    bob.post("/u/alice/follow/")
    run_jobs()  # the follow's own (bob's suggestions: `timeline.suggestions`)
    bob.get("/")
    bob_id = int(r.get(account_keys.username("bob")))
    make_away(r, bob_id)  # FANOUT_ACTIVE_DAYS without a visit
    alice.post("/post/", {"text": "while bob was away"})
    assert run_jobs() == 1
    assert r.zcard(keys.home(bob_id)) == 0  # the fan-out skipped the inactive reader
    page = body(bob.get("/"))
    assert "Your home is catching up" in page
    assert r.get(account_keys.seen(bob_id)) is not None  # stamped on the way out
    assert run_jobs() == 1  # the rebuild
    page = body(bob.get("/"))
    assert "while bob was away" in page
    assert "catching up" not in page


def test_the_last_seen_stamp_is_written_once_a_day(r, bob):
    bob_id = int(r.get(account_keys.username("bob")))
    r.set(account_keys.seen(bob_id), 1, ex=100)  # seen on some long-gone day
    bob.get("/")
    assert r.ttl(account_keys.seen(bob_id)) > 100  # stamped today, for 30 days
    r.expire(account_keys.seen(bob_id), 100)
    bob.get("/u/bob/")
    assert r.ttl(account_keys.seen(bob_id)) <= 100  # already today: no write
    assert run_jobs() == 0  # and an active reader's home needs no rebuild


@pytest.mark.real_redis
def test_the_first_page_of_a_day_notes_the_reader_active_in_the_stamps_trip(r, bob):
    """The day's stamp also notes the reader in the day's active users (the v2
    instance's `active_month`) without a round trip of its own: the first page of a
    day costs what it cost with the stamp alone, one trip more than the next page
    (two on a Cluster: the stamp, then the wake-up call of its slot's workers)."""
    from accounts.services import seen_day

    bob_id = int(r.get(account_keys.username("bob")))
    active = account_keys.active_day(seen_day())
    assert bob.get("/u/bob/").status_code == 200  # scripts loaded, connections made
    r.delete(active)
    r.set(account_keys.seen(bob_id), 1, ex=100)  # seen on some long-gone day
    with RoundTripCounter() as first:
        assert bob.get("/u/bob/").status_code == 200
    with RoundTripCounter() as next_page:
        assert bob.get("/u/bob/").status_code == 200
    assert first.count == next_page.count + (2 if is_cluster() else 1)
    assert first.most_per_node <= 1
    assert r.pfcount(active) == 1
    assert 0 < r.ttl(active) <= 31 * 86400
