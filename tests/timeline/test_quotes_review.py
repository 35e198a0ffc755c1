"""Quote posts, found in review: what a reader may not see of a quoted status
stays unseen, and every copy of the quoted text follows its edits."""

from __future__ import annotations

import pytest

from config.redis import is_cluster
from tests.api.helpers import api_client, token_for
from tests.helpers import logged_in_client, make_user, page, run_jobs
from tests.roundtrips import RoundTripCounter
from timeline import bookmarks, edits, filters, keys, quotes, services, social
from timeline.domain import Forbidden, Quote
from timeline.filters import KeywordChange


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.RATE_LIMIT_POST = "off"


@pytest.fixture
def people():
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def test_a_direct_message_is_not_quoted_even_by_its_author(r, people):
    alice, carol = people["alice"], people["carol"]
    services.follow_create(follower=carol, followee_id=alice.id)
    dm = services.status_create(author=alice, text="@bob the door code", direct=True)
    # A public quote's embed is checked for blocks and privacy only: it would show
    # the message to everyone (Mastodon's never quotes a private mention).
    with pytest.raises(Forbidden):
        quotes.status_quote(author=alice, sid=dm.id, text="look at this")
    run_jobs()
    for url in ("/", "/u/alice/", "/timeline/"):
        html = page(logged_in_client("carol"), url)
        assert "look at this" not in html, url
        assert "the door code" not in html, url
    answer = api_client(token_for(alice)).post(
        "/api/v1/statuses", {"status": "again", "quoted_status_id": str(dm.id)}
    )
    assert answer.status_code == 404, answer.content
    assert "again" not in page(logged_in_client("carol"), "/u/alice/")


def test_a_filtered_word_in_the_quoted_text_folds_the_quote(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    services.follow_create(follower=carol, followee_id=bob.id)
    original = services.status_create(author=alice, text="the dragon dies at the end")
    quotes.status_quote(author=bob, sid=original.id, text="no way")
    run_jobs()
    filters.filter_create(
        uid=carol.id,
        title="Spoilers",
        context=["home", "account", "public"],
        action="hide",
        keywords=[KeywordChange("dragon")],
    )
    client = logged_in_client("carol")
    for url in ("/", "/u/bob/", "/timeline/"):
        html = page(client, url)
        assert "dragon" not in html, url


def test_an_edit_of_the_quoted_post_reaches_a_repost_of_the_quote(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    services.follow_create(follower=carol, followee_id=bob.id)
    original = services.status_create(author=alice, text="my address is 12 Elm St")
    quote = quotes.status_quote(author=alice, sid=original.id, text="see")
    social.status_repost(user=bob, sid=quote.id)
    run_jobs()
    assert "12 Elm St" in page(logged_in_client("carol"), "/")
    edits.status_edit(user=alice, sid=original.id, text="my address is gone")
    run_jobs()
    client = logged_in_client("carol")
    for url in ("/", "/u/bob/"):
        html = page(client, url)
        assert "my address is gone" in html, url
        assert "12 Elm St" not in html, url


def test_an_edit_job_cut_short_after_the_quotes_hash_brings_its_copies_in_line(
    r, people, settings
):
    settings.FANOUT_PUSH_MAX = 0  # bob's statuses are read from his outbox
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    services.follow_create(follower=carol, followee_id=bob.id)
    original = services.status_create(author=alice, text="the old words")
    quote = quotes.status_quote(author=bob, sid=original.id, text="see")
    run_jobs()
    edited = edits.status_edit(user=alice, sid=original.id, text="the new words")
    # The edit job wrote the quote's hash and died before its outbox entry.
    held = Quote.from_field(r.hget(keys.status(quote.id), "quote"))
    r.hset(keys.status(quote.id), "quote", held.edited(edited).to_field())
    run_jobs()
    html = page(logged_in_client("carol"), "/")
    assert "the new words" in html
    assert "the old words" not in html


def test_a_quote_one_may_see_shows_its_embed_on_every_page_on_a_cluster_too(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    dave = make_user("dave")
    services.follow_create(follower=carol, followee_id=bob.id)
    root = services.status_create(author=dave, text="root post")
    original = services.status_create(author=alice, text="the zebra words")
    reply = quotes.status_quote(
        author=bob, sid=original.id, text="@carol see", reply_to=root.id
    )
    message = quotes.status_quote(
        author=bob, sid=original.id, text="@carol between us", direct=True
    )
    run_jobs()
    bookmarks.status_bookmark(user=carol, sid=reply.id)
    social.status_like(user=carol, sid=reply.id)
    client = logged_in_client("carol")
    for url in (f"/s/{root.id}/", "/bookmarks/", "/messages/"):
        assert "the zebra words" in page(client, url), url
    api = api_client(token_for(carol))
    for url in (
        f"/api/v1/statuses/{root.id}/context",
        "/api/v1/notifications",
        "/api/v1/bookmarks",
        "/api/v1/favourites",
        "/api/v1/conversations",
    ):
        assert "the zebra words" in api.get(url).content.decode(), url
    del message


@pytest.mark.real_redis
def test_a_quoting_reply_costs_a_clusters_thread_one_round_trip_more(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    root = services.status_create(author=carol, text="root post")
    services.status_create(author=bob, text="a plain reply", reply_to=root)
    run_jobs()
    client = logged_in_client("carol")
    before = _trips(client, f"/s/{root.id}/")
    original = services.status_create(author=alice, text="the zebra words")
    quotes.status_quote(author=bob, sid=original.id, text="see", reply_to=root.id)
    run_jobs()
    after = _trips(client, f"/s/{root.id}/")
    # One server checks the quote in its row script; a Cluster in one more trip.
    assert after == before + (1 if is_cluster() else 0)
    assert "the zebra words" in page(client, f"/s/{root.id}/")


def _trips(client, url: str) -> int:
    client.get(url)  # warm: sessions, scripts loaded
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    return counter.count


def test_a_revoke_during_the_edit_job_leaves_no_copy_with_the_quoted_text(
    r, people, settings, monkeypatch
):
    settings.FANOUT_PUSH_MAX = 0  # bob's and dave's statuses read from outboxes
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    dave = make_user("dave")
    for followee in (bob, dave):
        services.follow_create(follower=carol, followee_id=followee.id)
    original = services.status_create(author=alice, text="the old words")
    quote = quotes.status_quote(author=bob, sid=original.id, text="see")
    social.status_repost(user=dave, sid=quote.id)
    run_jobs()
    edits.status_edit(user=alice, sid=original.id, text="the new words")
    write = edits.quote_copies_write
    revoked = []

    def revoke_first(quotings):
        # Alice revokes the quote after the job read it, before it wrote copies.
        if not revoked:
            revoked.append(quote.id)
            quotes.quote_revoke(user=alice, sid=original.id, quoting_id=quote.id)
        return write(quotings)

    monkeypatch.setattr(edits, "quote_copies_write", revoke_first)
    run_jobs()
    assert revoked
    html = page(logged_in_client("carol"), "/")
    assert "see" in html
    assert "the new words" not in html and "the old words" not in html


def test_a_revoke_before_the_post_jobs_link_leaves_no_link(r, people, monkeypatch):
    alice, bob = people["alice"], people["bob"]
    original = services.status_create(author=alice, text="hello")
    # The request stored the quote and died before linking it.
    quote = services.status_create(author=bob, text="x", quote=Quote.of(original))
    add = social._QUOTE_ADD
    revoked = []

    def revoke_first(*args, **kwargs):
        # Alice revokes it after the post job read its hash, before it links.
        if not revoked:
            revoked.append(quote.id)
            quotes.quote_revoke(user=alice, sid=original.id, quoting_id=quote.id)
        return add(*args, **kwargs)

    monkeypatch.setattr(social, "_QUOTE_ADD", revoke_first)
    run_jobs()
    assert revoked
    assert r.zcard(keys.quotes(original.id)) == 0
    assert r.hget(keys.status(original.id), "quotes") in (None, "0")
    assert "0</strong> quotes" in page(logged_in_client("alice"), f"/s/{original.id}/")
