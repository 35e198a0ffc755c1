"""Mentions: `@name` is resolved to a user when the status is posted, stored with
it, and linked only then; links in a status are links."""

from __future__ import annotations

import json

import pytest
from django.test import Client

from tests.helpers import logged_in_client, make_user, page, run_jobs
from timeline import keys, services
from timeline.domain import Status


@pytest.fixture
def alice():
    return make_user("alice")


def test_names_are_resolved_when_posting_and_stored(r, alice):
    bob = make_user("Bob")
    status = services.status_create(
        author=alice, text="hi @BOB, @bob and @carol, mail a@bob.example"
    )
    assert status.mentions == (("bob", bob.id),)
    assert status.mentioned_ids == (bob.id,)
    assert json.loads(r.hget(keys.status(status.id), "mentions")) == {"bob": bob.id}
    make_user("carol")  # too late: who was meant was decided when posting
    html = page(Client(), f"/s/{status.id}/")
    # The link goes to the name as stored (what the API's Mention names), the text
    # stays as written.
    assert f'hi <a class="mention" href="/u/bob/?id={bob.id}">@BOB</a>, ' in html
    assert Client().get("/u/bob/").status_code == 200  # Bob's page, in any case
    assert f'<a class="mention" href="/u/bob/?id={bob.id}">@bob</a> and @carol,' in html
    assert 'href="/u/carol/"' not in html


def test_a_status_without_mentions_stores_no_field(r, alice):
    status = services.status_create(author=alice, text="@nobody_here hello")
    assert status.mentions == () and status.mentioned_ids == ()
    assert not r.hexists(keys.status(status.id), "mentions")


def test_at_most_ten_distinct_names_are_resolved(r, alice, settings):
    names = [f"user{i}" for i in range(12)]
    users = {name: make_user(name) for name in names}
    text = " ".join(f"@{name} @{name.upper()}" for name in names)
    status = services.status_create(author=alice, text=text)
    assert status.mentioned_ids == tuple(sorted(users[n].id for n in names[:10]))


def test_a_deleted_users_name_resolves_to_nothing_and_an_old_link_finds_no_one(
    r, alice
):
    bob = make_user("bob")
    before = services.status_create(author=alice, text="hello @bob")
    bob_client = logged_in_client("bob")
    bob_client.post("/settings/delete/", {"password": "correct-horse-battery"})
    run_jobs()
    after = services.status_create(author=alice, text="where is @bob")
    assert after.mentions == ()
    html = page(Client(), "/u/alice/")
    assert "where is @bob</p>" in html
    assert f'hello <a class="mention" href="/u/bob/?id={bob.id}">@bob</a>' in html
    assert Client().get(f"/u/bob/?id={bob.id}").status_code == 404
    assert before.mentioned_ids  # stored ids stay: notifications check the user


def test_statuses_stored_before_mentions_still_load(r, alice):
    status = services.status_create(author=alice, text="old @alice")
    r.hdel(keys.status(status.id), "mentions")
    html = page(Client(), f"/s/{status.id}/")
    assert "old @alice</p>" in html
    old_outbox_entry = json.dumps(["1", "alice", "old", "1.000"])
    loaded = Status.from_json(5, old_outbox_entry)
    assert loaded is not None and loaded.mentions == () and loaded.text == "old"
    assert Status.from_json(status.id, status.to_json()) == status
    row = {"uid": "1", "author": "alice", "text": "x", "mentions": "{not json"}
    damaged = Status.from_fields(5, [row.get(f) for f in Status.FIELDS])
    assert damaged is not None and damaged.mentions == ()


def test_a_posted_link_is_a_safe_link(r, alice):
    client = logged_in_client("alice")
    client.post(
        "/post/",
        {"text": 'see https://example.com/a?b=1&c=2). javascript:alert(1) "><b>'},
    )
    run_jobs()
    html = page(client, "/")
    assert (
        'see <a href="https://example.com/a?b=1&amp;c=2" rel="nofollow noopener ugc" '
        'title="https://example.com/a?b=1&amp;c=2">https://example.com/a?b=1&amp;c=2'
        "</a>). javascript:alert(1) &quot;&gt;&lt;b&gt;</p>"
    ) in html


def test_a_mention_of_a_name_reclaimed_since_says_so_on_the_new_profile(r, alice):
    """A mention links to the account it named when posted. After that account is
    deleted and its name is claimed again by someone else, the link leads to the
    name's new owner: their profile says that this is not the account the status
    named, rather than passing them off as it (the site and the client API alike)."""
    from accounts import keys as account_keys
    from tests.api.helpers import api_client, token_for
    from tests.helpers import PASSWORD

    bob = make_user("bob")
    status = services.status_create(author=alice, text="thanks @bob")
    html = page(Client(), f"/s/{status.id}/")
    href = f"/u/bob/?id={bob.id}"
    assert f'<a class="mention" href="{href}">@bob</a>' in html
    reader = api_client(token_for(alice))
    content = reader.get(f"/api/v1/statuses/{status.id}").json()
    assert 'href="http://testserver/u/bob/"' in content["content"]
    assert content["mentions"][0]["url"] == "http://testserver/u/bob/"
    # The link, followed while bob is bob: his profile, as it always was.
    assert "not the account" not in page(Client(), href)
    services.account_delete(user=bob, password=PASSWORD, client="test")
    run_jobs()
    r.delete(account_keys.username("bob"))  # as the name's grace period ends
    newcomer = make_user("bob")
    # The client API links the name no more, and names no one (Mastodon's way).
    content = reader.get(f"/api/v1/statuses/{status.id}").json()
    assert content["mentions"] == []
    assert content["content"] == "<p>thanks @bob</p>"
    shown = page(Client(), href)
    assert "@bob" in shown
    assert (
        "This is not the account the status you came from mentioned: that account "
        "was deleted, and its name now belongs to someone else."
    ) in shown
    # Reached any other way, the new owner's profile is theirs alone.
    assert "not the account" not in page(Client(), "/u/bob/")
    assert "not the account" not in page(Client(), f"/u/bob/?id={newcomer.id}")
    assert "not the account" not in page(Client(), "/u/bob/?id=x")
