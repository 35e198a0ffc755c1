"""Pins (`timeline.pins`): a user's own statuses shown first on their profile, at
most five, never a repost nor another's, gone with the status, shown to whom the
profile shows statuses, pinned and unpinned from the status's page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from config.redis import is_cluster
from tests.helpers import PASSWORD, body, logged_in_client, make_user, page, run_jobs
from tests.roundtrips import get_round_trips
from timeline import keys, pins, privacy, services, social
from timeline.domain import CannotPin, NotFound


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_LIKE = "off"


def pinned_shown(html: str) -> list[int]:
    """The ids of the statuses the profile shows under "Pinned"."""
    found = re.search(r'<section class="pinned".*?</section>', html, flags=re.S)
    return (
        [int(x) for x in re.findall(r'data-status-id="(\d+)"', found[0])]
        if found
        else []
    )


def pin_button(html: str) -> tuple[str, str]:
    found = re.search(
        r'<form method="post" action="([^"]+)" class="pin-form">.*?'
        r'aria-pressed="(\w+)"',
        html,
        flags=re.S,
    )
    assert found, "no pin button"
    return found[1], found[2]


def test_pins_show_first_on_the_profile_newest_pin_first(r):
    alice = make_user("alice")
    first, second, third = (
        services.status_create(author=alice, text=f"status {i}").id for i in range(3)
    )
    assert pins.status_pin(user=alice, sid=first) is True
    assert pins.status_pin(user=alice, sid=first) is False
    assert pins.status_pin(user=alice, sid=third) is True
    html = page(Client(), "/u/alice/")
    assert pinned_shown(html) == [third, first]
    # The statuses below stay as they were: every one, newest first.
    after = html.split('<section class="pinned"', 1)[1].split("</section>", 1)[1]
    assert [int(x) for x in re.findall(r'data-status-id="(\d+)"', after)][:3] == [
        third,
        second,
        first,
    ]
    # Only the first page shows them.
    older = page(Client(), f"/u/alice/?max_id={third}")
    assert pinned_shown(older) == []
    assert pins.status_unpin(user=alice, sid=third) is True
    assert pins.status_unpin(user=alice, sid=third) is False
    assert pinned_shown(page(Client(), "/u/alice/")) == [first]


def test_only_ones_own_statuses_and_no_repost_are_pinned(r):
    alice, bob = make_user("alice"), make_user("bob")
    hers = services.status_create(author=alice, text="hers").id
    with pytest.raises(CannotPin, match="Only your own statuses can be pinned."):
        pins.status_pin(user=bob, sid=hers)
    repost = social.status_repost(user=bob, sid=hers)
    with pytest.raises(CannotPin, match="A repost cannot be pinned."):
        pins.status_pin(user=bob, sid=repost.id)
    with pytest.raises(NotFound):
        pins.status_pin(user=bob, sid=987654321)
    assert r.zcard(keys.pins(bob.id)) == 0


def test_past_five_a_pin_is_refused_with_the_reason():
    alice = make_user("alice")
    sids = [services.status_create(author=alice, text=f"s{i}").id for i in range(6)]
    for sid in sids[:5]:
        pins.status_pin(user=alice, sid=sid)
    with pytest.raises(CannotPin, match="You have pinned 5 statuses"):
        pins.status_pin(user=alice, sid=sids[5])
    assert pinned_shown(page(Client(), "/u/alice/")) == sids[:5][::-1]


def test_a_deleted_status_is_unpinned_with_it(r):
    alice = make_user("alice")
    sid = services.status_create(author=alice, text="soon gone").id
    pins.status_pin(user=alice, sid=sid)
    services.status_delete(user=alice, sid=sid)
    run_jobs()
    assert r.zcard(keys.pins(alice.id)) == 0
    assert pinned_shown(page(Client(), "/u/alice/")) == []
    # A deleted one cannot be pinned again.
    with pytest.raises(NotFound):
        pins.status_pin(user=alice, sid=sid)


def test_a_private_account_s_pins_show_to_approved_followers_only():
    alice, bob = make_user("alice"), make_user("bob")
    sid = services.status_create(author=alice, text="for friends").id
    pins.status_pin(user=alice, sid=sid)
    privacy.account_privacy_set(user=alice, private=True)
    assert pinned_shown(page(Client(), "/u/alice/")) == []
    assert "for friends" not in page(logged_in_client("bob"), "/u/alice/")
    services.follow_ask(follower=bob, followee_id=alice.id)
    privacy.follow_request_approve(owner=alice, requester_id=bob.id)
    assert pinned_shown(page(logged_in_client("bob"), "/u/alice/")) == [sid]


def test_pin_and_unpin_from_the_status_page():
    make_user("alice")
    alice = logged_in_client("alice")
    assert alice.post("/post/", {"text": "pin me"}).status_code == 302
    run_jobs()
    sid = max(int(x) for x in re.findall(r'data-status-id="(\d+)"', page(alice, "/")))
    assert pin_button(page(alice, f"/s/{sid}/")) == (f"/s/{sid}/pin/", "false")
    answer = alice.post(f"/s/{sid}/pin/", {"next": f"/s/{sid}/"}, follow=True)
    assert "Pinned to your profile." in body(answer)
    assert pin_button(body(answer)) == (f"/s/{sid}/unpin/", "true")
    assert pinned_shown(page(Client(), "/u/alice/")) == [sid]
    # Nobody else gets the button, nor can pin it.
    make_user("bob")
    bob = logged_in_client("bob")
    assert 'class="pin-form"' not in page(bob, f"/s/{sid}/")
    refused = bob.post(f"/s/{sid}/unpin/", {"next": f"/s/{sid}/"}, follow=True)
    assert pinned_shown(page(Client(), "/u/alice/")) == [sid]
    refused = bob.post(f"/s/{sid}/pin/", {"next": f"/s/{sid}/"}, follow=True)
    assert "Only your own statuses can be pinned." in body(refused)
    alice.post(f"/s/{sid}/unpin/")
    assert pinned_shown(page(Client(), "/u/alice/")) == []
    assert Client().post(f"/s/{sid}/pin/").status_code == 302  # to log in
    assert logged_in_client("alice").get(f"/s/{sid}/pin/").status_code == 405


def test_a_deleted_account_leaves_no_pins(r):
    alice = make_user("alice")
    pins.status_pin(user=alice, sid=services.status_create(author=alice, text="x").id)
    services.account_delete(user=alice, password=PASSWORD, client="127.0.0.1")
    run_jobs()
    assert r.exists(keys.pins(alice.id)) == 0


@pytest.mark.real_redis
def test_a_profile_with_pins_costs_two_round_trips_without_one():
    alice = make_user("alice")
    sids = [services.status_create(author=alice, text=f"s{i}").id for i in range(8)]
    make_user("bob")
    bob = logged_in_client("bob")
    # Without pins, as before: one on one server, two on a Cluster.
    assert get_round_trips(bob, "/u/alice/") == (2 if is_cluster() else 1)
    pins.status_pin(user=alice, sid=sids[2])
    # The pins are read with the page's first round trip; their statuses with
    # the next one the page makes (a Cluster's), or in one of their own.
    assert get_round_trips(bob, "/u/alice/") == 2
