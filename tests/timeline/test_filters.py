"""Keyword filters on the site: a reader folds or hides the statuses with words
they would rather not read, where they choose; their own statuses never."""

from __future__ import annotations

import gc
import random
import re
import string
import time
import tracemalloc
from dataclasses import replace

import pytest
from django.test import Client

from tests.helpers import (
    PASSWORD,
    body,
    logged_in_client,
    make_user,
    page,
    run_jobs,
)
from tests.roundtrips import RoundTripCounter
from tests.timeline.test_edits import texts
from timeline import filters, keys, services, social
from timeline.domain import NotFound, Status
from timeline.filters import FilterKeyword, FilterRefused, KeywordChange


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


@pytest.fixture
def people():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    run_jobs()
    return alice, bob


def folded(html: str) -> list[str]:
    """The titles of the filters that fold each folded row, in page order."""
    return [
        re.sub(r"<[^>]+>", "", t)
        for t in re.findall(r'<bdi class="filter-titles">(.*?)</bdi>', html, re.S)
    ]


def new_filter(client: Client, **fields):
    data = {
        "title": "Spoilers",
        "keywords": "dragon",
        "whole_word": "on",
        "context": ["home", "public", "thread", "account", "notifications"],
        "action": "warn",
        "expires_in": "",
    }
    data.update(fields)
    return client.post("/filters/new/", data)


def post(user, text: str, reply_to: int | None = None, **options) -> int:
    if reply_to is not None:
        sid = social.status_reply(author=user, sid=reply_to, text=text).id
    else:
        sid = services.status_create(author=user, text=text, **options).id
    run_jobs()
    return sid


def test_a_warn_filter_folds_matching_statuses_on_every_page_it_names(r, people):
    alice, bob = people
    client = logged_in_client("bob")
    assert new_filter(client).status_code == 302
    post(alice, "the Dragon dies at the end")
    post(alice, "nothing to see")
    for url in ("/", "/timeline/", "/u/alice/"):
        html = page(client, url)
        # Both still there, in order; the one with the word folded under the title.
        assert texts(html) == ["nothing to see", "the Dragon dies at the end"], url
        assert folded(html) == ["Spoilers"], url
    # Nobody else's pages change.
    assert folded(page(Client(), "/timeline/")) == []
    assert folded(page(logged_in_client("alice"), "/u/alice/")) == []


def test_a_hide_filter_leaves_the_status_out(r, people):
    alice, _ = people
    client = logged_in_client("bob")
    new_filter(client, action="hide", keywords="dragon\n#got")
    post(alice, "a dragon!")
    post(alice, "watching #GoT tonight")
    post(alice, "dragonfly season")  # whole words only: not the same word
    for url in ("/", "/timeline/", "/u/alice/", "/tags/got/"):
        html = page(client, url)
        assert "a dragon!" not in texts(html), url
        assert "watching #GoT tonight" not in texts(html), url
    assert texts(page(client, "/")) == ["dragonfly season"]
    assert folded(page(client, "/")) == []


def test_a_page_whose_statuses_are_all_hidden_says_so(r, people):
    # Not "No statuses yet" nor "Your home is empty": there are, the filters
    # hide them.
    alice, _ = people
    client = logged_in_client("bob")
    new_filter(client, action="hide")
    post(alice, "dragon one")
    post(alice, "dragon two")
    for url, wrong in (
        ("/u/alice/", "No statuses yet."),
        ("/timeline/", "Nobody has posted yet."),
        ("/", "Your home is empty"),
    ):
        html = page(client, url)
        assert texts(html) == [], url
        assert wrong not in html, url
        assert "Your filters hide" in html, url
    assert "Your filters hide" not in page(Client(), "/timeline/")


def test_whole_word_or_not(r, people):
    alice, _ = people
    client = logged_in_client("bob")
    new_filter(client, keywords="cat", whole_word="")
    post(alice, "category theory")
    assert folded(page(client, "/")) == ["Spoilers"]


def test_only_the_contexts_it_names(r, people):
    alice, _ = people
    client = logged_in_client("bob")
    new_filter(client, context=["public"], action="hide")
    post(alice, "dragon news")
    assert texts(page(client, "/")) == ["dragon news"]
    assert texts(page(client, "/u/alice/")) == ["dragon news"]
    assert texts(page(client, "/timeline/")) == []


def test_the_readers_own_statuses_are_never_filtered(r, people):
    _, bob = people
    client = logged_in_client("bob")
    new_filter(client, action="hide")
    post(bob, "my dragon drawing")
    assert texts(page(client, "/")) == ["my dragon drawing"]
    assert texts(page(client, "/u/bob/")) == ["my dragon drawing"]


def test_a_content_warning_and_a_repost_match_too(r, people):
    alice, bob = people
    carol = make_user("carol")
    client = logged_in_client("bob")
    new_filter(client)
    post(alice, "it was all a dream", spoiler="Dragon finale")
    sid = post(carol, "dragon eggs")
    social.status_repost(user=alice, sid=sid)
    run_jobs()
    html = page(client, "/")
    assert folded(html) == ["Spoilers", "Spoilers"]


def test_a_thread_folds_the_statuses_around_the_one_opened(r, people):
    alice, bob = people
    top = post(alice, "dragon theory")
    reply = post(bob, "@alice no dragon here", reply_to=top)
    other = post(alice, "@bob a dragon after all", reply_to=reply)
    client = logged_in_client("bob")
    new_filter(client)
    html = page(client, f"/s/{reply}/")
    # The ancestor folded, the reply folded; the one opened (bob's own) shown.
    assert folded(html) == ["Spoilers", "Spoilers"]
    # Opened on its own, the status itself is shown, unfolded.
    html = page(client, f"/s/{other}/")
    assert f'data-status-id="{other}"' in html
    assert folded(html) == ["Spoilers"]  # its ancestor alone
    new_filter(client, title="Gone", keywords="theory", action="hide")
    html = page(client, f"/s/{other}/")
    assert "A deleted or hidden status" in html
    assert "dragon theory" not in texts(html)


def test_notifications_quote_a_folded_status_by_its_filter(r, people):
    alice, bob = people
    client = logged_in_client("bob")
    new_filter(client)
    post(alice, "@bob dragon spoilers for you")
    html = page(client, "/notifications/")
    assert "Filtered: <bdi>Spoilers</bdi>" in html
    assert "dragon spoilers for you" not in html
    new_filter(client, title="Hide", action="hide", context=["notifications"])
    html = page(client, "/notifications/")
    assert "mentioned you" not in html
    # Not "No notifications yet": there is one, the filter hides it.
    assert "No notifications yet" not in html
    assert "Your filters hide the notifications here." in html


def test_an_expired_filter_matches_nothing_and_is_listed_as_expired(r, people):
    alice, bob = people
    made = filters.filter_create(
        uid=bob.id,
        title="Old",
        context=["home"],
        expires=time.time() - 1,
        keywords=[KeywordChange("dragon")],
    )
    post(alice, "dragon")
    client = logged_in_client("bob")
    assert folded(page(client, "/")) == []
    html = page(client, "/filters/")
    assert "Old" in html and "Expired" in html
    filters.filter_update(uid=bob.id, fid=made.id, expires=None)
    assert folded(page(client, "/")) == ["Old"]


def test_the_form_keeps_what_was_typed_after_an_error(r, people):
    client = logged_in_client("bob")
    response = new_filter(client, title="", keywords="unicorns\nrainbows", context=[])
    assert response.status_code == 400
    html = body(response)
    assert "This field is required." in html
    assert "Choose where the filter applies." in html
    assert "unicorns\nrainbows" in html
    assert filters.filters_get(uid=make_user("carol").id).filters == ()


def test_editing_a_filter_keeps_the_keywords_it_still_has(r, people):
    _, bob = people
    client = logged_in_client("bob")
    new_filter(client, keywords="dragon\nwyvern")
    (made,) = filters.filters_get(uid=bob.id).filters
    ids = {k.keyword: k.id for k in made.keywords}
    edit_page = page(client, f"/filters/{made.id}/")
    assert "dragon\nwyvern" in edit_page and "As it is (Never ends)" in edit_page
    response = client.post(
        f"/filters/{made.id}/",
        {
            "title": "Beasts",
            "keywords": "Dragon\nbasilisk",
            "context": ["home"],
            "action": "hide",
            "expires_in": "keep",
        },
    )
    assert response.status_code == 302
    (changed,) = filters.filters_get(uid=bob.id).filters
    assert changed.title == "Beasts" and changed.action == "hide"
    assert changed.context == ("home",) and changed.expires is None
    words = {k.keyword: k.id for k in changed.keywords}
    assert set(words) == {"Dragon", "basilisk"}
    assert words["Dragon"] == ids["dragon"]  # kept, as typed now
    assert all(not k.whole_word for k in changed.keywords)  # box left unticked


def test_an_edit_that_leaves_the_whole_word_box_alone_keeps_each_keywords_own(
    r, people
):
    # An app made one keyword whole-word and one not: the box cannot show both,
    # and saving a new title leaves each as it was; a new keyword takes the box's.
    _, bob = people
    made = filters.filter_create(
        uid=bob.id,
        title="Mixed",
        context=["home"],
        keywords=[KeywordChange("cat", False), KeywordChange("dog", True)],
    )
    client = logged_in_client("bob")
    edit_page = page(client, f"/filters/{made.id}/")
    assert "cat\ndog" in edit_page
    box = re.search(r'<input[^>]*name="whole_word"[^>]*>', edit_page).group(0)
    response = client.post(
        f"/filters/{made.id}/",
        {
            "title": "Renamed",
            "keywords": "cat\ndog\nbird",
            **({"whole_word": "on"} if "checked" in box else {}),
            "context": ["home"],
            "action": "warn",
            "expires_in": "keep",
        },
    )
    assert response.status_code == 302
    (changed,) = filters.filters_get(uid=bob.id).filters
    assert changed.title == "Renamed"
    words = {k.keyword: k.whole_word for k in changed.keywords}
    assert words == {"cat": False, "dog": True, "bird": "checked" in box}


def test_a_filter_of_statuses_only_can_be_edited_on_the_site(r, people):
    # An app added a status to a filter with no keyword: the site lists it, and
    # its edit page saves a new title without asking for a keyword.
    alice, bob = people
    sid = post(alice, "a status")
    made = filters.filter_create(uid=bob.id, title="One status", context=["home"])
    filters.status_add(uid=bob.id, fid=made.id, sid=sid)
    client = logged_in_client("bob")
    assert "1 status (added from an app)" in page(client, "/filters/")
    response = client.post(
        f"/filters/{made.id}/",
        {
            "title": "That status",
            "keywords": "",
            "context": ["home", "thread"],
            "action": "hide",
            "expires_in": "keep",
        },
    )
    assert response.status_code == 302, body(response)
    (changed,) = filters.filters_get(uid=bob.id).filters
    assert changed.title == "That status" and changed.action == "hide"
    assert changed.context == ("home", "thread")
    assert [e.status_id for e in changed.statuses] == [sid]
    assert changed.keywords == ()
    # A filter without statuses still needs a keyword.
    plain = filters.filter_create(
        uid=bob.id, title="Words", context=["home"], keywords=[KeywordChange("x")]
    )
    response = client.post(
        f"/filters/{plain.id}/",
        {"title": "Words", "keywords": "", "context": ["home"], "action": "warn"},
    )
    assert response.status_code == 400
    assert "This field is required." in body(response)


def test_deleting_a_filter_takes_its_keywords_with_it(r, people):
    _, bob = people
    client = logged_in_client("bob")
    new_filter(client, keywords="a\nb\nc")
    (made,) = filters.filters_get(uid=bob.id).filters
    response = client.post(f"/filters/{made.id}/delete/")
    assert response.status_code == 302
    assert filters.filters_get(uid=bob.id).filters == ()
    assert set(r.hkeys(keys.filters(bob.id))) == {"next"}
    # Deleting a filter changes something: a GET may not.
    assert client.get(f"/filters/{made.id}/delete/").status_code == 405


def test_another_readers_filter_is_not_found(r, people):
    _, bob = people
    new_filter(logged_in_client("bob"))
    (made,) = filters.filters_get(uid=bob.id).filters
    carol = logged_in_client("carol") if make_user("carol") else None
    assert carol.get(f"/filters/{made.id}/").status_code == 404
    carol.post(f"/filters/{made.id}/delete/")
    assert len(filters.filters_get(uid=bob.id).filters) == 1


def test_the_caps(r, people, monkeypatch):
    _, bob = people
    monkeypatch.setattr(filters, "FILTERS_MAX", 2)
    monkeypatch.setattr(filters, "RULES_MAX", 3)
    filters.filter_create(
        uid=bob.id, title="one", context=["home"], keywords=[KeywordChange("a")]
    )
    made = filters.filter_create(
        uid=bob.id, title="two", context=["home"], keywords=[KeywordChange("b")]
    )
    with pytest.raises(FilterRefused, match="2 filters"):
        filters.filter_create(uid=bob.id, title="three", context=["home"])
    filters.keyword_add(uid=bob.id, fid=made.id, keyword="c", whole_word=True)
    with pytest.raises(FilterRefused, match="3 keywords"):
        filters.keyword_add(uid=bob.id, fid=made.id, keyword="d", whole_word=True)
    # Refused whole: nothing of the refused change was written.
    assert sum(len(f.keywords) for f in filters.filters_get(uid=bob.id).filters) == 3


def test_a_change_to_a_filter_deleted_meanwhile_writes_nothing(r, people):
    _, bob = people
    made = filters.filter_create(uid=bob.id, title="t", context=["home"])
    filters.filter_delete(uid=bob.id, fid=made.id)
    with pytest.raises(NotFound):
        filters.keyword_add(uid=bob.id, fid=made.id, keyword="x", whole_word=True)
    assert set(r.hkeys(keys.filters(bob.id))) == {"next"}


def test_ids_are_never_given_twice(r, people):
    _, bob = people
    first = filters.filter_create(uid=bob.id, title="t", context=["home"])
    filters.filter_delete(uid=bob.id, fid=first.id)
    second = filters.filter_create(uid=bob.id, title="t", context=["home"])
    assert second.id > first.id


def test_a_hand_written_field_never_breaks_a_page(r, people):
    alice, bob = people
    post(alice, "dragon")
    r.hset(keys.filters(bob.id), mapping={"f:x": "{", "k:1:2": "not json"})
    assert texts(page(logged_in_client("bob"), "/")) == ["dragon"]


def _with_keywords(words: list[tuple[str, bool]]) -> filters.Filters:
    """A reader's filters as their hash holds them: one filter with these keywords."""
    fields = {"f:1": '{"title":"t","context":["home"],"action":"warn"}'}
    for n, (word, whole) in enumerate(words, start=2):
        fields[f"k:1:{n}"] = FilterKeyword(n, word, whole).to_json()
    return filters.from_hash(fields, uid=7)


def _status(text: str, spoiler: str = "") -> Status:
    return Status(
        id=1, author_id=7, author="alice", text=text, created=0.0, spoiler=spoiler
    )


def test_a_reader_with_the_most_keywords_still_gets_a_page_quickly():
    """RULES_MAX keywords cost a page of long statuses a few milliseconds, not
    seconds (every page and API call of theirs matches every status shown)."""
    rng = random.Random(5)
    words = [
        ("".join(rng.choices(string.ascii_lowercase, k=rng.randint(5, 12))), n % 3 > 0)
        for n in range(filters.RULES_MAX)
    ]
    found = _with_keywords(words)
    page_of = [
        _status(" ".join(rng.choices(["the", "a", "dragon", "notes", "x" * 9], k=100)))
        for _ in range(40)
    ]
    started = time.perf_counter()
    kept, folded_ = found.fold(page_of, 99, "home")
    took = time.perf_counter() - started
    assert (len(kept), folded_) == (40, {})
    assert took < 0.15, f"{took:.2f}s for a page"


def test_a_reader_who_keeps_changing_their_filters_does_not_grow_the_process():
    """A process keeps one reader's parsed filters once, whatever they were
    before: a reader changing a keyword again and again (each change a new hash)
    leaves the memory of the last version only."""
    fields = {"f:1": '{"title":"t","context":["home"],"action":"warn"}'}
    fields |= {
        f"k:1:{n}": FilterKeyword(n, f"word{n:04d}" * 4, True).to_json()
        for n in range(2, 102)
    }
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        filters.from_hash(fields, uid=41)
        gc.collect()
        one = tracemalloc.get_traced_memory()[0] - before
        for n in range(30):
            fields["k:1:2"] = FilterKeyword(2, f"change {n}", True).to_json()
            found = filters.from_hash(fields, uid=41)
        gc.collect()
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert found.filters[0].keywords[0].keyword == "change 29"
    assert grown < 2 * one, f"{grown} bytes for 30 versions, {one} for one"


def test_matching_many_keywords_at_once_is_matching_each_alone():
    """The keywords of a filter, searched as one expression, match exactly where
    one of them alone would (shared beginnings, whole words or not, signs)."""
    words = [
        ("cat", True),
        ("cats", False),
        ("category", True),
        ("c++", True),
        ("c#", False),
        ("#tag", True),
        ("@name", True),
        ("🐉", True),
        ("new york", True),
        ("new", False),
        ("Straße", True),
        ("ÉTÉ", True),
    ]
    texts_ = [
        "a cat",
        "catalogue",
        "concatenate",
        "categoryless",
        "I like c++.",
        "c+++",
        "c#5",
        "#tags",
        "#TAG!",
        "hi @names",
        "hi @Name",
        "here be 🐉🐉",
        "New Yorkers",
        "new york!",
        "renewal",
        "STRASSE",
        "straße",
        "un été",
        "nothing",
    ]
    for n in range(len(words)):
        for m in range(n + 1, len(words) + 1):
            found = _with_keywords(words[n:m])
            for text in texts_:
                alone = any(
                    re.search(FilterKeyword(0, w, whole).pattern, text, re.I)
                    for w, whole in words[n:m]
                )
                assert bool(found.matches(_status(text), 99)) == alone, (words, text)


@pytest.mark.real_redis
def test_filters_cost_no_round_trip(r, people):
    """They ride in the first round trip: a home with filters reads as many times
    as one without."""
    alice, _ = people
    post(alice, "dragon")
    client = logged_in_client("bob")
    client.get("/")
    with RoundTripCounter() as counter:
        assert folded(page(client, "/")) == []
    before = counter.count
    new_filter(client)
    client.get("/")
    with RoundTripCounter() as counter:
        assert folded(page(client, "/")) == ["Spoilers"]
    assert counter.count == before
    assert counter.most_per_node <= 1


def test_the_account_deletion_takes_the_filters(r, people):
    _, bob = people
    new_filter(logged_in_client("bob"))
    assert r.exists(keys.filters(bob.id))
    services.account_delete(user=bob, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    assert not r.exists(keys.filters(bob.id))


@pytest.mark.parametrize(
    ("keyword", "whole_word", "text", "matched"),
    [
        ("c++", True, "I write C++ daily", "C++"),
        ("c++", True, "abc++", None),  # starts with a letter: a boundary before it
        ("#got", True, "watching #GoT", "#GoT"),
        ("#got", True, "watching #gotham", None),
        ("école", True, "L'ÉCOLE est finie", "ÉCOLE"),
        ("straße", False, "STRASSE", None),  # a different word to the rules
        ("🐉", True, "a 🐉 appears", "🐉"),
        ("new york", True, "New  York", None),  # the phrase as written
        ("new york", True, "in New York now", "New York"),
        ("a.b", False, "axb", None),  # no pattern characters
    ],
)
def test_a_keyword_matches_as_mastodons_do(r, keyword, whole_word, text, matched):
    alice = make_user("alice")
    viewer = make_user("bob")
    filters.filter_create(
        uid=viewer.id,
        title="t",
        context=["home"],
        keywords=[KeywordChange(keyword, whole_word)],
    )
    status = services.status_create(author=alice, text=text)
    found = filters.filters_get(uid=viewer.id).matches(status, viewer.id)
    assert [m.keyword_matches for m in found] == ([(matched,)] if matched else [])


def test_two_changes_of_a_filter_at_once_keep_both(r, people, monkeypatch):
    """One request renames a filter while another changes where it applies: the
    second, made from what it read before the first wrote, must not write the old
    title back (found in review: the step wrote the whole filter it had read)."""
    _, bob = people
    made = filters.filter_create(
        uid=bob.id, title="Old", context=["home"], keywords=[KeywordChange("x")]
    )
    write = filters._write
    raced: list[int] = []

    def racing(uid, changes):
        if not raced:
            raced.append(1)  # the other request lands between read and write
            write(uid, [("set", made.id, 0, replace(made, title="New").own_json())])
        return write(uid, changes)

    monkeypatch.setattr(filters, "_write", racing)
    filters.filter_update(uid=bob.id, fid=made.id, context=["home", "public"])
    (found,) = filters.filters_get(uid=bob.id).filters
    assert found.title == "New" and found.context == ("home", "public")
    (word,) = found.keywords
    raced.clear()
    filters.keyword_update(uid=bob.id, kid=word.id, keyword=None, whole_word=False)
    assert filters.filters_get(uid=bob.id).filters[0].title == "New"
