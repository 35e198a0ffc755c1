"""The site's report form (`/u/<name>/report/`): the links that lead to it, the
statuses it offers, its errors (what was typed is kept), CSRF, the rate limit's
429, oneself refused, a visitor sent to log in, and the thanks page."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from tests.helpers import body, logged_in_client, make_user
from timeline import reports, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_REPORT = "off"


@pytest.fixture
def people():
    alice, bob = make_user("alice"), make_user("bob")
    statuses = [services.status_create(author=bob, text=f"bob {i}") for i in range(3)]
    return alice, bob, statuses


def ticked(html: str) -> list[int]:
    return [int(m) for m in re.findall(r'name="status" value="(\d+)" checked', html)]


def test_the_profile_and_a_status_page_lead_to_the_form(people):
    alice, bob, statuses = people
    client = logged_in_client("alice")
    assert 'href="/u/bob/report/"' in body(client.get("/u/bob/"))
    status_page = body(client.get(f"/s/{statuses[1].id}/"))
    assert f'href="/u/bob/report/?status={statuses[1].id}"' in status_page
    # Not on one's own, nor for a visitor.
    assert "/report/" not in body(logged_in_client("bob").get("/u/bob/"))
    assert "/report/" not in body(Client().get("/u/bob/"))


def test_the_form_offers_their_recent_statuses_with_the_one_ticked(people):
    alice, bob, statuses = people
    page = body(
        logged_in_client("alice").get(f"/u/bob/report/?status={statuses[1].id}")
    )
    for status in statuses:
        assert (
            f'value="{status.id}"' in page and f"bob {statuses.index(status)}" in page
        )
    assert ticked(page) == [statuses[1].id]
    assert 'name="category"' in page and 'value="violation"' not in page


def test_a_report_is_filed_and_thanked_for(people):
    alice, bob, statuses = people
    client = logged_in_client("alice")
    answer = client.post(
        "/u/bob/report/",
        {"category": "spam", "comment": "selling pills", "status": [statuses[0].id]},
    )
    assert answer.status_code == 302 and answer["Location"] == "/u/bob/reported/"
    thanks = body(client.get(answer["Location"]))
    assert "Thanks: the people who run this site will look at it." in thanks
    assert 'action="/u/bob/block/"' in thanks and 'action="/u/bob/mute/"' in thanks
    (filed,) = reports.reports_list()
    assert (filed.reporter, filed.target, filed.category) == ("alice", "bob", "spam")
    assert filed.comment == "selling pills"
    assert [s.text for s in filed.statuses] == ["bob 0"]


def test_errors_keep_what_was_typed(people):
    alice, bob, statuses = people
    client = logged_in_client("alice")
    answer = client.post(
        "/u/bob/report/", {"comment": "he is rude", "status": [statuses[2].id]}
    )
    assert answer.status_code == 400
    page = body(answer)
    assert "Choose why you report them." in page
    assert "he is rude</textarea>" in page
    assert ticked(page) == [statuses[2].id]
    too_long = client.post(
        "/u/bob/report/", {"category": "other", "comment": "x" * 1001}
    )
    assert too_long.status_code == 400
    assert "x" * 1001 in body(too_long)
    assert reports.reports_list() == []


def test_the_rate_limit_answers_429_and_keeps_the_text(people, settings):
    settings.RATE_LIMIT_REPORT = "1/1h"
    client = logged_in_client("alice")
    assert client.post("/u/bob/report/", {"category": "spam"}).status_code == 302
    answer = client.post(
        "/u/bob/report/", {"category": "other", "comment": "and again"}
    )
    assert answer.status_code == 429 and answer["Retry-After"]
    page = body(answer)
    assert "too many reports lately" in page and "and again</textarea>" in page
    assert len(reports.reports_list()) == 1


def test_one_cannot_report_oneself(people):
    client = logged_in_client("bob")
    for answer in (
        client.get("/u/bob/report/"),
        client.post("/u/bob/report/", {"category": "spam"}),
    ):
        assert answer.status_code == 302 and answer["Location"] == "/u/bob/"
    assert "You cannot report yourself." in body(client.get("/u/bob/"))
    assert reports.reports_list() == []


def test_a_visitor_is_sent_to_log_in(people):
    answer = Client().get("/u/bob/report/")
    assert answer.status_code == 302
    assert answer["Location"] == "/login/?next=%2Fu%2Fbob%2Freport%2F"
    assert Client().post("/u/bob/report/", {"category": "spam"}).status_code == 302
    assert reports.reports_list() == []


def test_the_form_is_csrf_protected(people):
    client = logged_in_client("alice", enforce_csrf_checks=True)
    assert client.post("/u/bob/report/", {"category": "spam"}).status_code == 403
    assert reports.reports_list() == []


def test_an_unknown_account_is_404(people):
    assert logged_in_client("alice").get("/u/nobody/report/").status_code == 404


@pytest.mark.real_redis
def test_the_pages_cost_what_a_profile_costs(people):
    from config.redis import is_cluster
    from tests.roundtrips import get_round_trips

    alice, bob, statuses = people
    client = logged_in_client("alice")
    # The profile's read rides with the viewer's check, as on the profile page:
    # one round trip on one server, two on a Cluster.
    profile = get_round_trips(client, "/u/bob/")
    assert profile == (2 if is_cluster() else 1)
    assert get_round_trips(client, "/u/bob/report/") == profile
    assert get_round_trips(client, f"/u/bob/report/?status={statuses[0].id}") == profile
    assert get_round_trips(client, "/u/bob/reported/") == profile


@pytest.mark.real_redis
def test_a_status_older_than_the_first_page_costs_no_more(people, settings):
    # Opened from an old status's own page: the form offers it too (ticked), and
    # the page still costs what a profile costs.
    from config.redis import is_cluster
    from tests.roundtrips import get_round_trips

    alice, bob, statuses = people
    for i in range(settings.TIMELINE_PAGE_SIZE):
        services.status_create(author=bob, text=f"later {i}")
    client = logged_in_client("alice")
    old = statuses[0].id
    page = body(client.get(f"/u/bob/report/?status={old}"))
    assert ticked(page) == [old] and "bob 0" in page
    trips = get_round_trips(client, f"/u/bob/report/?status={old}")
    assert trips == (2 if is_cluster() else 1)


def test_the_form_offers_no_status_the_reporter_cannot_see(people):
    # `?status=` of bob's direct message to carol, or of bob's status once he
    # blocks alice: the form does not show its text, nor offers it.
    from timeline import blocks

    alice, bob, statuses = people
    make_user("carol")
    dm = services.status_create(author=bob, text="@carol our secret", direct=True)
    client = logged_in_client("alice")
    page = body(client.get(f"/u/bob/report/?status={dm.id}"))
    assert "our secret" not in page and ticked(page) == []
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    answer = client.get(f"/u/bob/report/?status={statuses[0].id}")
    assert answer.status_code == 404 or "bob 0" not in body(answer)


def test_a_comment_s_line_breaks_count_once(people):
    # A browser sends a textarea's line breaks as CRLF; its counter (and Mastodon's
    # limit) counts each once: 1,000 characters over ten lines are not "too long".
    alice, bob, statuses = people
    lines = ["x" * 99] * 10
    answer = logged_in_client("alice").post(
        "/u/bob/report/", {"category": "other", "comment": "\r\n".join(lines)}
    )
    assert answer.status_code == 302
    (filed,) = reports.reports_list()
    assert filed.comment == "\n".join(lines) and len(filed.comment) == 999
