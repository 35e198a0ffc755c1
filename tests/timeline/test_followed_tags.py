"""Followed hashtags on the site: a reader follows `#tag` from its page, and the
tag's public statuses show in their home beside those of the people they follow
(each once, under the home's rules, paged without repeats or gaps); the followed
tags' page unfollows them; the account's deletion takes them."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from config.redis import is_cluster
from tests.helpers import PASSWORD, body, logged_in_client, make_user, page, run_jobs
from tests.roundtrips import RoundTripCounter
from tests.timeline.test_edits import texts
from timeline import blocks, filters, keys, privacy, services, social, tagfollows
from timeline.domain import NotFound
from timeline.tagfollows import TagFollowRefused


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    """Bob follows alice; carol is a stranger to him."""
    alice, bob, carol = (make_user(n) for n in ("alice", "bob", "carol"))
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob, carol


def post(user, text: str, **options) -> int:
    sid = services.status_create(author=user, text=text, **options).id
    run_jobs()
    return sid


def home(client: Client, query: str = "") -> list[str]:
    return texts(page(client, f"/{query}"))


def older_link(html: str) -> str | None:
    found = re.search(r'href="[^"]*\?max_id=(\d+)"', html)
    return found.group(1) if found else None


def followed_shown(html: str) -> list[str]:
    return re.findall(r'aria-label="Unfollow #([^"]+)"', html)


# The service.


def test_a_tag_is_followed_once_case_folded_and_unfollowed(r, people):
    _, bob, _ = people
    assert tagfollows.tag_follow(uid=bob.id, tag="#Django") == "django"
    assert tagfollows.tag_follow(uid=bob.id, tag="DJANGO") == "django"
    tagfollows.tag_follow(uid=bob.id, tag="café")
    assert r.zrange(keys.followed_tags(bob.id), 0, -1) == ["django", "café"]
    assert tagfollows.tag_unfollow(uid=bob.id, tag="Django") == "django"
    assert tagfollows.tag_unfollow(uid=bob.id, tag="django") == "django"  # no-op
    assert r.zrange(keys.followed_tags(bob.id), 0, -1) == ["café"]
    for wrong in ("", "#", "a b", "x" * 151, "123", "a}b"):
        with pytest.raises(NotFound):
            tagfollows.tag_follow(uid=bob.id, tag=wrong)
    assert r.zcard(keys.followed_tags(bob.id)) == 1


def test_past_the_cap_a_follow_is_refused_with_a_message(r, people, settings):
    _, bob, _ = people
    settings.FOLLOWED_TAGS_MAX = 2
    tagfollows.tag_follow(uid=bob.id, tag="one")
    tagfollows.tag_follow(uid=bob.id, tag="two")
    with pytest.raises(TagFollowRefused, match="You follow 2 hashtags"):
        tagfollows.tag_follow(uid=bob.id, tag="three")
    tagfollows.tag_follow(uid=bob.id, tag="two")  # followed already: no refusal
    tagfollows.tag_unfollow(uid=bob.id, tag="one")
    tagfollows.tag_follow(uid=bob.id, tag="three")
    assert sorted(r.zrange(keys.followed_tags(bob.id), 0, -1)) == ["three", "two"]


def test_the_account_deletion_takes_the_followed_tags(r, people):
    _, bob, _ = people
    tagfollows.tag_follow(uid=bob.id, tag="django")
    services.account_delete(user=bob, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    assert not r.exists(keys.followed_tags(bob.id))


# The home.


def test_a_followed_tag_brings_a_strangers_public_status_into_the_home(r, people):
    alice, bob, carol = people
    post(carol, "before #Django")
    post(alice, "from alice")
    post(carol, "untagged")
    client = logged_in_client("bob")
    assert home(client) == ["from alice"]
    tagfollows.tag_follow(uid=bob.id, tag="django")
    post(carol, "after #django")
    # The tag's newest at once (no backfill job), merged by id with the home.
    assert home(client) == ["after #django", "from alice", "before #Django"]
    tagfollows.tag_unfollow(uid=bob.id, tag="django")
    assert home(client) == ["from alice"]


def test_unlisted_and_private_statuses_never_come_through_a_tag(r, people):
    _, bob, carol = people
    dave = make_user("dave")
    privacy.account_privacy_set(user=dave, private=True)
    run_jobs()
    post(carol, "quiet #django", unlisted=True)
    post(dave, "protected #django")
    post(carol, "public #django")
    tagfollows.tag_follow(uid=bob.id, tag="django")
    assert home(logged_in_client("bob")) == ["public #django"]


def test_a_status_from_a_followed_author_and_two_tags_shows_once(r, people):
    alice, bob, _ = people
    tagfollows.tag_follow(uid=bob.id, tag="one")
    tagfollows.tag_follow(uid=bob.id, tag="two")
    post(alice, "#one and #two")
    assert home(logged_in_client("bob")) == ["#one and #two"]


def test_blocks_mutes_and_filters_apply_to_a_tags_statuses(r, people):
    alice, bob, carol = people
    dave, erin = make_user("dave"), make_user("erin")
    tagfollows.tag_follow(uid=bob.id, tag="django")
    post(carol, "carol #django")
    post(dave, "dave #django")
    post(erin, "erin #django")
    post(erin, "erin names @carol #django")
    post(alice, "alice #django about snakes")
    blocks.block_create(blocker=bob, blocked_id=carol.id)
    blocks.mute_create(user=bob, muted_id=dave.id)
    filters.filter_create(
        uid=bob.id,
        title="snakes",
        context=["home"],
        action="hide",
        keywords=[filters.KeywordChange("snakes")],
    )
    run_jobs()
    # Carol blocked, dave muted, a status naming carol, a filtered one: gone.
    assert home(logged_in_client("bob")) == ["erin #django"]


def test_paging_across_the_merge_repeats_and_skips_nothing(r, people, settings):
    settings.TIMELINE_PAGE_SIZE = 3
    alice, bob, carol = people
    tagfollows.tag_follow(uid=bob.id, tag="one")
    tagfollows.tag_follow(uid=bob.id, tag="two")
    expected = []
    for i in range(5):
        expected.append(f"alice {i}")
        post(alice, f"alice {i}")
        expected.append(f"carol {i} #one")
        post(carol, f"carol {i} #one")
        if i % 2:
            expected.append(f"alice {i} #two")
            post(alice, f"alice {i} #two")  # in the home and in a tag
        expected.append(f"carol {i} #one #two")
        post(carol, f"carol {i} #one #two")  # in two tags
    client = logged_in_client("bob")
    seen, query = [], ""
    for _ in range(20):
        html = page(client, f"/{query}")
        seen += texts(html)
        cursor = older_link(html)
        if cursor is None:
            break
        query = f"?max_id={cursor}"
    assert seen == expected[::-1]


def test_a_repost_and_its_tagged_original_show_once(r, people):
    alice, bob, carol = people
    tagfollows.tag_follow(uid=bob.id, tag="django")
    original = post(carol, "news #django")
    social.status_repost(user=alice, sid=original)
    run_jobs()
    # The repost in the home, the original through the tag: shown once.
    assert home(logged_in_client("bob")) == ["news #django"]


def home_pages(client: Client) -> list[list[str]]:
    pages, query = [], ""
    for _ in range(20):
        html = page(client, f"/{query}")
        pages.append(texts(html))
        cursor = older_link(html)
        if cursor is None:
            return pages
        query = f"?max_id={cursor}"
    raise AssertionError("no end")


def test_a_repost_of_a_tagged_original_just_below_shows_as_the_original(
    r, people, settings
):
    """The home's rule for reposts (Mastodon's falloff) counts what a followed tag
    brings: the original shows where it came, once, on a later page, and the
    repost is left out; older than the falloff, the repost shows at the top."""
    settings.TIMELINE_PAGE_SIZE = 2
    alice, bob, carol = people
    tagfollows.tag_follow(uid=bob.id, tag="django")
    original = post(carol, "news #django")
    for i in range(3):
        post(alice, f"alice {i}")
    social.status_repost(user=alice, sid=original)
    run_jobs()
    client = logged_in_client("bob")
    shown = [text for texts_of in home_pages(client) for text in texts_of]
    assert shown == ["alice 2", "alice 1", "alice 0", "news #django"]
    settings.HOME_REPOST_FALLOFF = 2
    shown = [text for texts_of in home_pages(client) for text in texts_of]
    assert shown == ["news #django", "alice 2", "alice 1", "alice 0", "news #django"]


@pytest.mark.real_redis
def test_a_home_with_followed_tags_costs_one_round_trip_on_one_server(
    r, people, redis_backend
):
    alice, bob, carol = people
    post(alice, "from alice")
    for tag in ("one", "two", "three"):
        tagfollows.tag_follow(uid=bob.id, tag=tag)
        post(carol, f"carol #{tag}")
    client = logged_in_client("bob")
    client.get("/")  # warm: connections, scripts
    with RoundTripCounter() as counter:
        assert len(home(client)) == 4
    # One server: the followed tags' timelines merged in the window's script,
    # with the auth check. A Cluster: the home's ids with the followed tags, the
    # tags' ids (other slots), the statuses, their authors' cards.
    assert counter.count == (4 if is_cluster() else 1)
    assert counter.most_per_node <= 1


# The pages.


def test_follow_from_the_tag_page_and_unfollow_from_the_followed_page(r, people):
    _, bob, carol = people
    post(carol, "hello #Django")
    client = logged_in_client("bob")
    html = page(client, "/tags/Django/")
    assert 'aria-label="Follow #django"' in html
    done = client.post("/tags/Django/follow/")
    assert done.status_code == 302 and done["Location"] == "/tags/django/"
    html = page(client, "/tags/django/")
    assert "You follow #django" in html
    assert followed_shown(html) == ["django"]
    assert home(client) == ["hello #Django"]
    client.post("/tags/python/follow/")
    listed = page(client, "/settings/tags/")
    assert followed_shown(listed) == ["python", "django"]  # newest follow first
    assert "/settings/tags/" in page(client, "/settings/")
    back = client.post("/tags/django/unfollow/", {"next": "/settings/tags/"})
    assert back["Location"] == "/settings/tags/"
    assert followed_shown(page(client, "/settings/tags/")) == ["python"]
    assert home(client) == []


def test_the_buttons_need_a_login_a_post_and_a_tag(r, people):
    visitor = Client()
    assert "Follow #" not in page(visitor, "/tags/django/")
    assert visitor.post("/tags/django/follow/")["Location"].startswith("/login/")
    assert visitor.get("/settings/tags/")["Location"].startswith("/login/")
    client = logged_in_client("bob")
    assert client.get("/tags/django/follow/").status_code == 405
    assert client.post("/tags/a%20b/follow/").status_code == 404
    csrf = logged_in_client("bob", enforce_csrf_checks=True)
    assert csrf.post("/tags/django/follow/").status_code == 403
    assert r.zcard(keys.followed_tags(people[1].id)) == 0


def test_past_the_cap_the_page_says_so(r, people, settings):
    settings.FOLLOWED_TAGS_MAX = 1
    client = logged_in_client("bob")
    client.post("/tags/one/follow/")
    refused = client.post("/tags/two/follow/", follow=True)
    assert "Not followed: You follow 1 hashtags" in body(refused)
    assert followed_shown(page(client, "/settings/tags/")) == ["one"]


def test_follows_of_tags_take_from_the_follow_budget(r, people, settings):
    settings.RATE_LIMIT_FOLLOW = "2/1m"
    client = logged_in_client("bob")
    assert client.post("/tags/one/follow/").status_code == 302
    assert client.post("/tags/one/unfollow/").status_code == 302
    refused = client.post("/tags/two/follow/")
    assert refused.status_code == 429 and refused["Retry-After"]
    assert r.zcard(keys.followed_tags(people[1].id)) == 0


@pytest.mark.real_redis
def test_the_tag_page_with_its_button_costs_what_it_did(r, people):
    _, bob, carol = people
    post(carol, "hello #django")
    tagfollows.tag_follow(uid=bob.id, tag="django")
    client = logged_in_client("bob")
    client.get("/tags/django/")
    with RoundTripCounter() as counter:
        assert "Unfollow #django" in page(client, "/tags/django/")
    assert counter.count == (3 if is_cluster() else 1)


def test_a_pulled_authors_repost_of_a_tagged_original_just_below_shows_once(
    r, people, settings
):
    """The falloff counts what a followed tag brings for a pulled author's repost
    too (an author past FANOUT_PUSH_MAX, merged at read): on one server as on a
    Cluster, the repost is left out and the original shows where it came."""
    settings.FANOUT_PUSH_MAX = 1
    settings.TIMELINE_PAGE_SIZE = 2
    alice, bob, carol = people
    star = make_user("star")
    for reader in (bob, carol):
        services.follow_create(follower=reader, followee_id=star.id)
    run_jobs()  # star has two followers: pulled
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    tagfollows.tag_follow(uid=bob.id, tag="django")
    original = post(carol, "news #django")
    for i in range(3):
        post(alice, f"alice {i}")
    social.status_repost(user=star, sid=original)
    run_jobs()
    shown = [
        text for texts_of in home_pages(logged_in_client("bob")) for text in texts_of
    ]
    assert shown == ["alice 2", "alice 1", "alice 0", "news #django"]
