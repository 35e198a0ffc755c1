"""Quote posts (`timeline.quotes`): a status that quotes another shows it embedded
on every page that shows it, checked at read; what may be quoted; the quoted
author's notification; deletions on either side; edits reaching the copy."""

from __future__ import annotations

import re
import time

import pytest
from django.test import Client

from accounts import services as account_services
from config.redis import is_cluster
from tests.helpers import (
    logged_in_client,
    make_user,
    notifications_shown,
    page,
    run_jobs,
)
from tests.roundtrips import RoundTripCounter
from timeline import blocks, edits, keys, lists, privacy, quotes, services, social
from timeline.domain import Forbidden, NotFound, Quote

UNAVAILABLE = "This post is unavailable."


@pytest.fixture(autouse=True)
def _limits(settings):
    settings.RATE_LIMIT_POST = "off"


@pytest.fixture
def people():
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def quoted(people, text: str = "the original words") -> tuple[int, int]:
    """Alice posts `text`, bob quotes it; carol follows bob. The two ids."""
    services.follow_create(follower=people["carol"], followee_id=people["bob"].id)
    original = services.status_create(author=people["alice"], text=text)
    quote = quotes.status_quote(author=people["bob"], sid=original.id, text="look")
    run_jobs()
    return original.id, quote.id


def test_a_quote_shows_the_quoted_post_embedded_on_every_page(r, people):
    original, quote = quoted(people)
    carol = logged_in_client("carol")
    for url in ("/", "/u/bob/", f"/s/{quote}/", "/timeline/"):
        html = page(carol, url)
        assert "the original words" in html, url
        assert 'class="quote-embed"' in html, url
        assert f'href="/s/{original}/"' in html, url
        assert "@alice" in html, url
    # A visitor too, on the public pages.
    assert "the original words" in page(Client(), f"/s/{quote}/")


def test_a_quote_shows_the_embed_on_tag_and_list_pages(r, people):
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="the original words")
    services.follow_create(follower=carol, followee_id=bob.id)
    quotes.status_quote(author=bob, sid=original.id, text="see #quoted")
    run_jobs()
    listed = lists.list_create(uid=carol.id, title="Friends")
    lists.members_add(uid=carol.id, lid=listed.id, member_ids=[bob.id])
    client = logged_in_client("carol")
    for url in ("/tags/quoted/", f"/lists/{listed.id}/"):
        html = page(client, url)
        assert "the original words" in html, url
        assert 'class="quote-embed"' in html, url


def test_the_embed_names_the_quoted_author(r, people):
    account_services.profile_update(user=people["alice"], name="Alice Liddell", bio="")
    _, quote = quoted(people)
    carol = logged_in_client("carol")
    for url in ("/", "/u/bob/", "/timeline/"):
        html = page(carol, url)
        assert '<bdi class="display-name">Alice Liddell</bdi> @alice</a>' in html, url


def test_the_quoted_posts_link_and_count(r, people):
    original, _ = quoted(people)
    assert r.hget(keys.status(original), "quotes") == "1"
    assert r.zcard(keys.quotes(original)) == 1
    html = page(logged_in_client("carol"), f"/s/{original}/")
    assert "1</strong> quote" in html


def test_a_deleted_quoted_post_shows_unavailable_at_once(r, people):
    original, quote = quoted(people)
    services.status_delete(user=people["alice"], sid=original)  # no job run
    carol = logged_in_client("carol")
    for url in ("/", "/u/bob/", f"/s/{quote}/"):
        html = page(carol, url)
        assert "the original words" not in html, url
        assert UNAVAILABLE in html, url
    run_jobs()
    assert not r.exists(keys.quotes(original))
    assert UNAVAILABLE in page(carol, "/")


def test_a_quoted_author_turned_private_shows_unavailable_to_others(r, people):
    _, quote = quoted(people)
    privacy.account_privacy_set(user=people["alice"], private=True)
    carol = logged_in_client("carol")
    for url in ("/", "/u/bob/", f"/s/{quote}/"):
        html = page(carol, url)
        assert "the original words" not in html, url
        assert UNAVAILABLE in html, url
    # Alice herself still sees it.
    assert "the original words" in page(logged_in_client("alice"), f"/s/{quote}/")


def test_a_block_either_way_hides_the_quoted_post(r, people):
    _, quote = quoted(people)
    blocks.block_create(blocker=people["alice"], blocked_id=people["carol"].id)
    run_jobs()
    carol = logged_in_client("carol")
    for url in ("/", "/u/bob/", f"/s/{quote}/"):
        html = page(carol, url)
        assert "the original words" not in html, url
        assert UNAVAILABLE in html, url


def test_a_quote_of_a_quote_links_the_inner_one_only(r, people):
    original, quote = quoted(people)
    outer = quotes.status_quote(author=people["carol"], sid=quote, text="and this")
    run_jobs()
    html = page(logged_in_client("carol"), f"/s/{outer.id}/")
    assert "look" in html  # bob's text, embedded
    assert "Quoting another post" in html
    assert f'href="/s/{original}/"' in html
    assert html.count("the original words") == 0


def test_what_may_not_be_quoted(r, people):
    alice, bob = people["alice"], people["bob"]
    privacy.account_privacy_set(user=alice, private=True)
    secret = services.status_create(author=alice, text="secret")
    with pytest.raises(NotFound):  # bob does not follow her
        quotes.status_quote(author=bob, sid=secret.id, text="x")
    # Her own private post she may quote.
    own = quotes.status_quote(author=alice, sid=secret.id, text="me again")
    assert own.quote is not None and own.quote.id == secret.id
    dm = services.status_create(author=bob, text="@carol hi", direct=True)
    with pytest.raises(NotFound):
        quotes.status_quote(author=alice, sid=dm.id, text="x")
    public = services.status_create(author=people["carol"], text="open")
    blocks.block_create(blocker=people["carol"], blocked_id=bob.id)
    with pytest.raises(NotFound):
        quotes.status_quote(author=bob, sid=public.id, text="x")
    assert r.zcard(keys.quotes(public.id)) == 0


def test_a_followers_quote_of_a_private_post_is_refused(r, people):
    alice, bob = people["alice"], people["bob"]
    privacy.account_privacy_set(user=alice, private=True)
    services.follow_create(follower=bob, followee_id=alice.id)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    run_jobs()
    secret = services.status_create(author=alice, text="secret")
    with pytest.raises(Forbidden):
        quotes.status_quote(author=bob, sid=secret.id, text="x")


def test_a_repost_is_quoted_as_its_original(r, people):
    original = services.status_create(author=people["alice"], text="first")
    repost = social.status_repost(user=people["bob"], sid=original.id)
    quote = quotes.status_quote(author=people["carol"], sid=repost.id, text="q")
    assert quote.quote is not None and quote.quote.id == original.id


def test_the_quoted_author_is_told_and_the_delete_takes_it_back(r, people):
    _, quote = quoted(people)
    alice = logged_in_client("alice")
    assert any("quoted your post" in n for n in notifications_shown(alice))
    services.status_delete(user=people["bob"], sid=quote)
    run_jobs()
    assert not any("quoted your post" in n for n in notifications_shown(alice))


def test_deleting_the_quote_unlinks_it(r, people):
    original, quote = quoted(people)
    services.status_delete(user=people["bob"], sid=quote)
    run_jobs()
    assert r.zcard(keys.quotes(original)) == 0
    assert r.hget(keys.status(original), "quotes") == "0"


def test_a_quoted_author_who_muted_the_quoter_is_not_told(r, people):
    alice, bob = people["alice"], people["bob"]
    blocks.mute_create(user=alice, muted_id=bob.id)
    original = services.status_create(author=alice, text="hello")
    quotes.status_quote(author=bob, sid=original.id, text="x")
    run_jobs()
    shown = notifications_shown(logged_in_client("alice"))
    assert not any("quoted your post" in n for n in shown)


def test_an_edit_of_the_quoted_post_reaches_the_quote(r, people):
    original, quote = quoted(people)
    edits.status_edit(user=people["alice"], sid=original, text="better words")
    run_jobs()
    html = page(logged_in_client("carol"), f"/s/{quote}/")
    assert "better words" in html
    assert "the original words" not in html


def test_a_pulled_authors_quote_is_checked_too(r, people, settings):
    settings.FANOUT_PUSH_MAX = 0  # bob is read from his outbox
    original, quote = quoted(people)
    carol = logged_in_client("carol")
    assert "the original words" in page(carol, "/")
    services.status_delete(user=people["alice"], sid=original)
    html = page(carol, "/")
    assert "the original words" not in html
    assert UNAVAILABLE in html


def test_the_quote_page_posts_a_quote_and_keeps_the_text_on_refusal(r, people):
    original = services.status_create(author=people["alice"], text="quote me")
    bob = logged_in_client("bob")
    html = page(bob, f"/s/{original.id}/quote/")
    assert "quote me" in html
    assert f'name="quote_of" value="{original.id}"' in html
    answer = bob.post("/post/", {"text": "so true", "quote_of": original.id})
    assert answer.status_code == 302
    run_jobs()
    assert "quote me" in page(logged_in_client("carol"), "/timeline/")
    # Refused (the quoted post is gone): the error, and the text kept.
    services.status_delete(user=people["alice"], sid=original.id)
    answer = bob.post("/post/", {"text": "kept words", "quote_of": original.id})
    assert answer.status_code == 400
    html = answer.content.decode()
    assert "gone, or hidden from you" in html
    assert "kept words" in html


def test_rows_offer_a_quote_link(r, people):
    original = services.status_create(author=people["alice"], text="hi")
    html = page(logged_in_client("bob"), "/timeline/")
    assert f'href="/s/{original.id}/quote/"' in html


def _trips(client, url: str) -> int:
    client.get(url)  # warm: connections open, scripts loaded
    with RoundTripCounter() as counter:
        assert client.get(url).status_code == 200
    return counter.count


@pytest.mark.real_redis
def test_pages_with_quotes_cost_the_round_trips_they_did(r, people):
    services.follow_create(follower=people["carol"], followee_id=people["bob"].id)
    plain = services.status_create(author=people["bob"], text="plain")
    # A repost (on a Cluster its original is checked in a round trip of its own,
    # as a quote's is): a quote costs what a repost costs, on one server nothing.
    other = services.status_create(author=people["alice"], text="reposted")
    social.status_repost(user=people["bob"], sid=other.id)
    run_jobs()
    carol = logged_in_client("carol")
    before = {url: _trips(carol, url) for url in ("/", "/u/bob/", f"/s/{plain.id}/")}
    if not is_cluster():
        assert before["/"] == 1
    _, quote = quoted(people)
    after = {url: _trips(carol, url) for url in ("/", "/u/bob/", f"/s/{quote}/")}
    assert list(after.values()) == list(before.values())
    assert "the original words" in page(carol, "/")


def test_the_quotes_page_lists_them_newest_first_but_hidden_ones(r, people, settings):
    settings.TIMELINE_PAGE_SIZE = 2
    alice, bob, carol = people["alice"], people["bob"], people["carol"]
    original = services.status_create(author=alice, text="much quoted")
    dave = make_user("dave")
    privacy.account_privacy_set(user=dave, private=True)
    texts = []
    for n, author in enumerate((bob, carol, bob, dave)):
        quotes.status_quote(author=author, sid=original.id, text=f"take {n}")
        texts.append(f"take {n}")
        # Ids follow time across authors to the tick (`timeline.ids`): two
        # authors' posts in one tick may sort either way.
        time.sleep(0.002)
    run_jobs()
    client = logged_in_client("carol")
    first = page(client, f"/s/{original.id}/quotes/")
    # Dave's (private, carol does not follow him) is left out: a shorter page.
    assert "take 3" not in first
    assert "take 2" in first
    assert "take 1" not in first  # the next page's
    cursor = re.search(r"\?max_id=(\d+)", first).group(1)
    second = page(client, f"/s/{original.id}/quotes/?max_id={cursor}")
    assert second.index("take 1") < second.index("take 0")
    assert "the much quoted" not in second and "much quoted" in second  # embeds
    assert "4</strong> quotes" in page(client, f"/s/{original.id}/")


def test_the_post_job_links_a_quote_whose_request_died_before(r, people):
    original = services.status_create(author=people["alice"], text="hello")
    # The request stored the quote and died before linking it.
    quote = services.status_create(
        author=people["bob"], text="x", quote=Quote.of(original)
    )
    assert r.zcard(keys.quotes(original.id)) == 0
    run_jobs()
    assert r.zrange(keys.quotes(original.id), 0, -1) == [
        f"{quote.id}:{people['bob'].id}"
    ]
    assert r.hget(keys.status(original.id), "quotes") == "1"
    shown = notifications_shown(logged_in_client("alice"))
    assert any("quoted your post" in n for n in shown)


def test_past_the_cap_a_quote_is_refused_and_taken_back(r, people, monkeypatch):
    monkeypatch.setattr(social, "QUOTES_MAX", 1)
    monkeypatch.setattr(quotes, "QUOTES_MAX", 1)
    original = services.status_create(author=people["alice"], text="hello")
    quotes.status_quote(author=people["bob"], sid=original.id, text="first")
    with pytest.raises(quotes.QuotesFull, match="quoted 1 times"):
        quotes.status_quote(author=people["carol"], sid=original.id, text="second")
    run_jobs()
    assert r.zcard(keys.quotes(original.id)) == 1
    assert r.zcard(keys.posts(people["carol"].id)) == 0
    assert "second" not in page(logged_in_client("alice"), "/timeline/")


def test_a_repost_of_a_quote_shows_the_embed(r, people):
    original, quote = quoted(people)
    social.status_repost(user=people["carol"], sid=quote)
    run_jobs()
    html = page(logged_in_client("carol"), "/u/carol/")
    assert "the original words" in html
    services.status_delete(user=people["alice"], sid=original)
    assert UNAVAILABLE in page(logged_in_client("carol"), "/u/carol/")


def test_a_revoked_quote_shows_nothing_of_the_quoted_post(r, people):
    original, quote = quoted(people)
    with pytest.raises(Forbidden):  # not bob's post: only its author revokes
        quotes.quote_revoke(user=people["bob"], sid=original, quoting_id=quote)
    quotes.quote_revoke(user=people["alice"], sid=original, quoting_id=quote)
    run_jobs()
    for url in ("/", "/u/bob/", f"/s/{quote}/"):
        html = page(logged_in_client("carol"), url)
        assert "the original words" not in html, url
        assert UNAVAILABLE in html, url
    assert r.zcard(keys.quotes(original)) == 0
    assert r.hget(keys.status(original), "quotes") == "0"
    # An edit of the quoted post does not bring it back.
    edits.status_edit(user=people["alice"], sid=original, text="new words")
    run_jobs()
    assert "new words" not in page(logged_in_client("carol"), f"/s/{quote}/")


def test_a_reply_or_a_parent_that_quotes_shows_its_embed_in_the_thread(r, people):
    # Bob's quote of alice's post is replied to by carol, and carol's reply quotes
    # alice's too: on either status's page, the other (a parent, a reply) shows its
    # embed, as on every page; through the client API's context too.
    from tests.api.helpers import api_client, token_for

    original, quote = quoted(people)
    reply = social.status_reply(author=people["carol"], sid=quote, text="agreed")
    answer = quotes.status_quote(
        author=people["carol"], sid=original, text="and this", reply_to=quote
    )
    run_jobs()
    carol = logged_in_client("carol")
    for url in (f"/s/{reply.id}/", f"/s/{quote}/"):
        html = page(carol, url)
        assert "the original words" in html, url
        assert UNAVAILABLE not in html, url
    client = api_client(token_for(people["carol"]))
    context = client.get(f"/api/v1/statuses/{quote}/context").json()
    by_id = {s["id"]: s for s in context["descendants"]}
    assert by_id[str(answer.id)]["quote"]["state"] == "accepted"
    assert by_id[str(answer.id)]["quote"]["quoted_status"]["id"] == str(original)
    context = client.get(f"/api/v1/statuses/{reply.id}/context").json()
    parent = context["ancestors"][0]
    assert parent["id"] == str(quote)
    assert parent["quote"]["state"] == "accepted"


def test_a_quote_refused_for_posting_too_fast_keeps_the_quote(r, people, settings):
    """Past the posting rate limit the quote page comes back with the text typed
    and the quoted post still attached: posting again quotes it (not a plain post
    from the home's compose box, which knows nothing of the quote)."""
    settings.RATE_LIMIT_POST = "1/1h"
    original = services.status_create(author=people["alice"], text="the words")
    bob = logged_in_client("bob")
    first = bob.post("/post/", {"text": "first", "quote_of": original.id})
    assert first.status_code == 302
    refused = bob.post("/post/", {"text": "typed again", "quote_of": original.id})
    assert refused.status_code == 429 and "Retry-After" in refused
    html = refused.content.decode()
    assert "typed again" in html
    assert f'name="quote_of" value="{original.id}"' in html
    assert "the words" in html  # the post quoted, above the box


@pytest.mark.parametrize(("how", "said"), [("block", "blocked"), ("mute", "muted")])
def test_a_quoted_author_one_blocked_or_muted_is_folded_under_show_anyway(
    r, people, how, said
):
    """Carol blocks (or mutes) alice, whose post bob quoted: the embed says why it
    is hidden and folds the post under "Show anyway" (Mastodon's web UI does the
    same), on every page; alice blocking carol stays "This post is unavailable."."""
    _, quote = quoted(people)
    alice, carol = people["alice"], people["carol"]
    if how == "block":
        blocks.block_create(blocker=carol, blocked_id=alice.id)
    else:
        blocks.mute_create(user=carol, muted_id=alice.id)
    run_jobs()
    client = logged_in_client("carol")
    for url in ("/", "/u/bob/", f"/s/{quote}/"):
        html = page(client, url)
        assert f"This post is hidden because you {said} @alice." in html, url
        folded = re.search(r'<details class="quote-folded">(.*?)</details>', html, re.S)
        assert folded is not None, url
        assert "Show anyway" in folded.group(1), url
        assert "the original words" in folded.group(1), url
    blocks.block_create(blocker=alice, blocked_id=carol.id)
    html = page(client, f"/s/{quote}/")
    assert UNAVAILABLE in html
    assert "the original words" not in html


@pytest.mark.real_redis
def test_the_quote_link_shows_only_where_a_quote_would_be_accepted(r, people):
    """A private account's rows offer "Quote" to their author only (an approved
    follower's quote would be refused at posting), on the home, the profile and
    the status page; a public account's rows to everyone signed in. The rows carry
    what decides it (the author's card): the pages cost the round trips they did."""
    alice, bob = people["alice"], people["bob"]
    services.follow_create(follower=bob, followee_id=alice.id)
    shared = services.status_create(author=alice, text="public words")
    run_jobs()
    pages = ("/", "/u/alice/", f"/s/{shared.id}/")
    viewer = logged_in_client("bob")
    before = {url: _trips(viewer, url) for url in pages}
    for url in pages:
        assert f'href="/s/{shared.id}/quote/"' in page(viewer, url), url
    privacy.account_privacy_set(user=alice, private=True)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    secret = services.status_create(author=alice, text="secret words")
    run_jobs()
    for url in ("/", "/u/alice/", f"/s/{secret.id}/"):
        html = page(viewer, url)
        assert "secret words" in html, url
        assert f'href="/s/{secret.id}/quote/"' not in html, url
    own = logged_in_client("alice")
    for url in ("/u/alice/", f"/s/{secret.id}/"):
        assert f'href="/s/{secret.id}/quote/"' in page(own, url), url
    assert {url: _trips(viewer, url) for url in pages} == before


def test_the_quoted_author_revokes_a_quote_from_the_quotes_page(r, people, settings):
    """Alice's quotes page gives each row a "Revoke quote" button (a CSRF-protected
    POST); pressing it says what happened, and bob's quote shows "This post is
    unavailable." and leaves her quotes, as the API's revoke. Nobody else is
    offered the button, and their POST is 403 with nothing changed; revoking is
    rate-limited as likes are (429, nothing changed)."""
    settings.RATE_LIMIT_LIKE = "1/1h"
    original, quote = quoted(people)
    other = quotes.status_quote(author=people["carol"], sid=original, text="mine")
    run_jobs()
    listing = f"/s/{original}/quotes/"
    revoke = f"/s/{original}/quotes/{quote}/revoke/"
    for name in ("bob", "carol"):
        client = logged_in_client(name)
        assert "Revoke quote" not in page(client, listing), name
        assert client.post(revoke).status_code == 403, name
        assert "the original words" in page(client, f"/s/{quote}/"), name
    assert r.zcard(keys.quotes(original)) == 2
    # Without the page's CSRF token the POST is refused.
    strict = logged_in_client("alice", enforce_csrf_checks=True)
    assert strict.post(revoke).status_code == 403
    assert r.zcard(keys.quotes(original)) == 2
    owner = logged_in_client("alice")
    html = page(owner, listing)
    assert html.count("Revoke quote") == 2
    assert f'action="{revoke}"' in html
    answer = owner.post(revoke, {"next": listing}, follow=True)
    assert answer.redirect_chain[-1][0] == listing
    shown = answer.content.decode()
    assert "Quote revoked: the post by @bob no longer shows yours." in shown
    assert f'data-status-id="{quote}"' not in shown
    assert f'data-status-id="{other.id}"' in shown
    assert UNAVAILABLE in page(logged_in_client("carol"), f"/s/{quote}/")
    assert r.zcard(keys.quotes(original)) == 1
    # The budget is spent: past it, 429 and the other quote stands.
    refused = owner.post(f"/s/{original}/quotes/{other.id}/revoke/")
    assert refused.status_code == 429 and "Retry-After" in refused
    assert r.zcard(keys.quotes(original)) == 1


@pytest.mark.parametrize("how", ["block", "mute"])
def test_a_keyword_filter_folds_a_row_whose_folded_embed_has_the_word(r, people, how):
    """Carol muted (or blocked) alice, whose post bob quoted, and filters a word of
    alice's post: the embed's "Show anyway" would show the word, so the filter
    folds bob's row as it does where the embed shows whole (it matched only an
    embed shown unfolded: the word was one click away, unfiltered)."""
    _, quote = quoted(people, text="the dragon returns")
    alice, carol = people["alice"], people["carol"]
    if how == "block":
        blocks.block_create(blocker=carol, blocked_id=alice.id)
    else:
        blocks.mute_create(user=carol, muted_id=alice.id)
    run_jobs()
    client = logged_in_client("carol")
    made = client.post(
        "/filters/new/",
        {
            "title": "Spoilers",
            "keywords": "dragon",
            "whole_word": "on",
            "context": ["home", "public", "thread", "account", "notifications"],
            "action": "warn",
            "expires_in": "",
        },
    )
    assert made.status_code == 302
    for url in ("/", "/u/bob/"):
        html = page(client, url)
        assert '<details class="quote-folded">' in html, url
        assert re.search(r'<bdi class="filter-titles">[^<]*Spoilers', html), url


def test_revoking_a_quote_hidden_from_the_quoted_author_tells_nothing_of_it(r, people):
    """Bob's account is private and alice does not follow him: his quote of her
    post is hidden from her. Her revoke POST for its id (a guess: her quotes page
    does not list it) revokes it all the same, as the API's does, and answers 404
    as for an id that quotes nothing, naming no one (it answered "the post by @bob",
    telling her who wrote a status she may not see, and that it quotes hers)."""
    alice, bob = people["alice"], people["bob"]
    original = services.status_create(author=alice, text="the original words")
    privacy.account_privacy_set(user=bob, private=True)
    quote = quotes.status_quote(author=bob, sid=original.id, text="look").id
    run_jobs()
    owner = logged_in_client("alice")
    assert f'data-status-id="{quote}"' not in page(owner, f"/s/{original.id}/quotes/")
    answer = owner.post(f"/s/{original.id}/quotes/{quote}/revoke/", follow=True)
    assert answer.status_code == 404
    assert "@bob" not in answer.content.decode()
    assert "@bob" not in page(owner, f"/s/{original.id}/quotes/")  # no message kept
    assert UNAVAILABLE in page(logged_in_client("bob"), f"/s/{quote}/")  # revoked
    nothing = owner.post(f"/s/{original.id}/quotes/{original.id}/revoke/")
    assert nothing.status_code == 404
