"""POST /api/v1/reports (Mastodon's): the Report entity, the errors Mastodon gives
(404 for an account or status not found, 422 for a bad field), the rate limit and
the `write:reports` scope."""

from __future__ import annotations

import pytest

from tests.api.helpers import api_client, token_for
from tests.helpers import make_user
from timeline import blocks, reports, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_API = "off"
    settings.RATE_LIMIT_FOLLOW = "off"
    settings.RATE_LIMIT_REPORT = "off"


@pytest.fixture
def people():
    return make_user("alice"), make_user("bob"), make_user("carol")


def _api(user, scopes=("read", "write")):
    return api_client(token_for(user, scopes=scopes))


def test_a_report_answers_the_entity_and_reaches_the_operators(people):
    alice, bob, _ = people
    sid = services.status_create(author=bob, text="spam spam").id
    answer = _api(alice).post(
        "/api/v1/reports",
        {
            "account_id": str(bob.id),
            "status_ids[]": [str(sid)],
            "comment": "Spam account",
            "category": "spam",
            "forward": "true",
        },
    )
    assert answer.status_code == 200, answer.content
    entity = answer.json()
    assert set(entity) == {
        "id",
        "action_taken",
        "action_taken_at",
        "category",
        "comment",
        "forwarded",
        "created_at",
        "status_ids",
        "rule_ids",
        "target_account",
    }
    assert entity["id"] == "1"
    assert entity["action_taken"] is False and entity["action_taken_at"] is None
    assert (entity["category"], entity["comment"]) == ("spam", "Spam account")
    assert entity["forwarded"] is False  # no federation: nothing to forward to
    assert entity["status_ids"] == [str(sid)] and entity["rule_ids"] is None
    assert entity["target_account"]["id"] == str(bob.id)
    assert entity["target_account"]["username"] == "bob"
    assert entity["created_at"].endswith("Z")
    (filed,) = reports.reports_list()
    assert filed.reporter == "alice" and [s.text for s in filed.statuses] == [
        "spam spam"
    ]


def test_json_bodies_and_the_default_category(people):
    alice, bob, _ = people
    answer = _api(alice).post(
        "/api/v1/reports",
        {"account_id": str(bob.id)},
        content_type="application/json",
    )
    assert answer.status_code == 200, answer.content
    assert answer.json()["category"] == "other"
    assert answer.json()["status_ids"] == [] and answer.json()["comment"] == ""


@pytest.mark.parametrize(
    "fields",
    [
        {"account_id": "999999"},
        {"account_id": "abc"},
        {},
    ],
)
def test_an_unknown_account_is_404(people, fields):
    answer = _api(people[0]).post("/api/v1/reports", fields)
    assert answer.status_code == 404
    assert answer.json() == {"error": "Record not found"}


def test_a_status_not_theirs_or_not_visible_is_404(people):
    alice, bob, carol = people
    carols = services.status_create(author=carol, text="carol's").id
    bobs = services.status_create(author=bob, text="bob's").id
    client = _api(alice)
    for sid in (carols, 123456789, "x"):
        answer = client.post(
            "/api/v1/reports", {"account_id": str(bob.id), "status_ids[]": [str(sid)]}
        )
        assert answer.status_code == 404, sid
        assert answer.json() == {"error": "Record not found"}
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    answer = client.post(
        "/api/v1/reports", {"account_id": str(bob.id), "status_ids[]": [str(bobs)]}
    )
    assert answer.status_code == 404
    assert reports.reports_list() == []


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        (
            {"comment": "x" * 1001},
            "Validation failed: Comment is too long (maximum is 1000 characters)",
        ),
        (
            {"category": "violation"},
            "Validation failed: Rule ids does not reference valid rules",
        ),
        (
            {"rule_ids[]": ["1"]},
            "Validation failed: Rule ids does not reference valid rules",
        ),
        (
            {"category": "bad"},
            "Validation failed: Category is not included in the list",
        ),
    ],
)
def test_bad_fields_are_422_as_mastodon_says(people, fields, error):
    alice, bob, _ = people
    answer = _api(alice).post("/api/v1/reports", {"account_id": str(bob.id), **fields})
    assert answer.status_code == 422
    assert answer.json() == {"error": error}
    assert reports.reports_list() == []


def test_reporting_oneself_is_422(people):
    alice = people[0]
    answer = _api(alice).post("/api/v1/reports", {"account_id": str(alice.id)})
    assert answer.status_code == 422
    assert answer.json() == {"error": "Validation failed: You cannot report yourself."}


def test_too_many_statuses_is_422(people, settings):
    settings.REPORT_STATUSES_MAX = 1
    alice, bob, _ = people
    sids = [str(services.status_create(author=bob, text=f"{i}").id) for i in range(2)]
    answer = _api(alice).post(
        "/api/v1/reports", {"account_id": str(bob.id), "status_ids[]": sids}
    )
    assert answer.status_code == 422
    assert "at most 1 statuses" in answer.json()["error"]


def test_the_rate_limit_is_429(people, settings):
    settings.RATE_LIMIT_REPORT = "1/1h"
    alice, bob, _ = people
    client = _api(alice)
    assert (
        client.post("/api/v1/reports", {"account_id": str(bob.id)}).status_code == 200
    )
    answer = client.post("/api/v1/reports", {"account_id": str(bob.id)})
    assert answer.status_code == 429 and answer["Retry-After"]
    assert len(reports.reports_list()) == 1


def test_it_takes_write_reports(people):
    alice, bob, _ = people
    fields = {"account_id": str(bob.id)}
    read_only = _api(alice, scopes=("read",)).post("/api/v1/reports", fields)
    assert read_only.status_code == 403
    assert "error" in read_only.json()
    assert api_client().post("/api/v1/reports", fields).status_code == 401
    narrow = _api(alice, scopes=("write:reports",)).post("/api/v1/reports", fields)
    assert narrow.status_code == 200, narrow.content
    assert len(reports.reports_list()) == 1
