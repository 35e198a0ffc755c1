"""Reports in the store (`timeline.reports`): filed in one step with a copy of the
flagged statuses, capped with a message, rate limited, settled once, and kept
through an edit, a delete and an account's deletion."""

from __future__ import annotations

import pytest
from django.test import Client

from accounts import limits
from accounts.domain import TooManyAttempts
from tests.helpers import PASSWORD, logged_in_client, make_user, run_jobs
from timeline import blocks, edits, keys, reports, services, social
from timeline.domain import NotFound
from timeline.reports import CannotReportSelf, ReportRefused, ReportsFull


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_REPORT = "off"


@pytest.fixture
def users():
    return {name: make_user(name) for name in ("alice", "bob", "carol")}


def test_a_report_is_filed_with_a_copy_of_its_statuses(users):
    alice, bob = users["alice"], users["bob"]
    first = services.status_create(author=bob, text="buy cheap pills")
    second = services.status_create(author=bob, text="buy more pills")
    filed = reports.report_file(
        reporter=alice,
        target_id=bob.id,
        category="spam",
        comment="He sells pills",
        status_ids=[first.id, second.id],
    )
    assert filed.id == 1
    stored = reports.report_get(rid=filed.id)
    assert stored == filed
    assert (stored.reporter, stored.target, stored.category) == ("alice", "bob", "spam")
    assert stored.comment == "He sells pills"
    assert [s.text for s in stored.statuses] == ["buy cheap pills", "buy more pills"]
    assert [r.id for r in reports.reports_list()] == [1]
    assert reports.reports_list(settled=True) == []


def test_the_copy_survives_an_edit_and_a_delete(users):
    alice, bob = users["alice"], users["bob"]
    edited = services.status_create(author=bob, text="you are awful")
    deleted = services.status_create(author=bob, text="I know where you live")
    filed = reports.report_file(
        reporter=alice, target_id=bob.id, status_ids=[edited.id, deleted.id]
    )
    edits.status_edit(user=bob, sid=edited.id, text="have a nice day")
    services.status_delete(user=bob, sid=deleted.id)
    run_jobs()
    stored = reports.report_get(rid=filed.id)
    assert [s.text for s in stored.statuses] == [
        "you are awful",
        "I know where you live",
    ]
    standing = reports.standing_get([stored])
    assert standing.statuses == {edited.id}


def test_ids_follow_one_another_and_the_list_is_oldest_first(users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    ids = [
        reports.report_file(reporter=alice, target_id=bob.id).id,
        reports.report_file(reporter=carol, target_id=bob.id).id,
        reports.report_file(reporter=bob, target_id=alice.id).id,
    ]
    assert ids == [1, 2, 3]
    assert [(r.reporter, r.target) for r in reports.reports_list()] == [
        ("alice", "bob"),
        ("carol", "bob"),
        ("bob", "alice"),
    ]


def test_refusals_say_why_and_store_nothing(users, r):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    others = services.status_create(author=carol, text="carol's")
    with pytest.raises(CannotReportSelf, match="cannot report yourself"):
        reports.report_file(reporter=alice, target_id=alice.id)
    with pytest.raises(ReportRefused, match="no rules"):
        reports.report_file(reporter=alice, target_id=bob.id, category="violation")
    with pytest.raises(ReportRefused, match="at most 1,000"):
        reports.report_file(reporter=alice, target_id=bob.id, comment="x" * 1001)
    with pytest.raises(NotFound):
        reports.report_file(reporter=alice, target_id=999)
    with pytest.raises(NotFound):  # not one of bob's statuses
        reports.report_file(reporter=alice, target_id=bob.id, status_ids=[others.id])
    with pytest.raises(NotFound):
        reports.report_file(reporter=alice, target_id=bob.id, status_ids=[12345])
    assert r.exists(keys.report_ids(), keys.reports_open()) == 0


def test_at_most_so_many_statuses_a_report(users, settings):
    settings.REPORT_STATUSES_MAX = 2
    alice, bob = users["alice"], users["bob"]
    sids = [services.status_create(author=bob, text=f"s{i}").id for i in range(3)]
    with pytest.raises(ReportRefused, match="at most 2 statuses"):
        reports.report_file(reporter=alice, target_id=bob.id, status_ids=sids)
    filed = reports.report_file(reporter=alice, target_id=bob.id, status_ids=sids[:2])
    assert len(filed.statuses) == 2


def test_a_status_the_reporter_cannot_see_cannot_be_flagged(users):
    alice, bob = users["alice"], users["bob"]
    status = services.status_create(author=bob, text="hidden from alice")
    blocks.block_create(blocker=bob, blocked_id=alice.id)
    with pytest.raises(NotFound):
        reports.report_file(reporter=alice, target_id=bob.id, status_ids=[status.id])
    # The account itself may still be reported: one who blocked you may harass you.
    assert reports.report_file(reporter=alice, target_id=bob.id).target == "bob"


def test_a_full_queue_refuses_with_a_message_and_drops_nothing(users, settings):
    settings.REPORTS_OPEN_MAX = 2
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    reports.report_file(reporter=alice, target_id=bob.id)
    reports.report_file(reporter=carol, target_id=bob.id)
    with pytest.raises(ReportsFull, match="too many reports"):
        reports.report_file(reporter=alice, target_id=carol.id)
    assert [r.id for r in reports.reports_list()] == [1, 2]
    reports.report_settle(rid=1)
    assert reports.report_file(reporter=alice, target_id=carol.id).id == 3


def test_settling_moves_a_report_once(users):
    alice, bob = users["alice"], users["bob"]
    filed = reports.report_file(reporter=alice, target_id=bob.id)
    assert reports.report_settle(rid=filed.id, note="warned him") == reports.SETTLED
    assert reports.report_settle(rid=filed.id, note="again") == reports.ALREADY
    assert reports.report_settle(rid=99) == reports.UNKNOWN
    assert reports.reports_list() == []
    (settled,) = reports.reports_list(settled=True)
    assert settled.note == "warned him" and settled.settled is not None


def test_the_oldest_settled_reports_go_past_the_cap(users, settings, r):
    settings.REPORTS_SETTLED_MAX = 2
    alice, bob = users["alice"], users["bob"]
    ids = [reports.report_file(reporter=alice, target_id=bob.id).id for _ in range(3)]
    for rid in ids:
        reports.report_settle(rid=rid)
    assert [x.id for x in reports.reports_list(settled=True)] == [3, 2]
    assert reports.report_get(rid=1) is None
    assert not r.exists(keys.report(1))


def test_the_rate_limit_refuses_and_stores_nothing(users, settings, r):
    settings.RATE_LIMIT_REPORT = "2/1h"
    alice, bob = users["alice"], users["bob"]
    for _ in range(2):
        reports.report_file(
            reporter=alice, target_id=bob.id, limit=limits.report(alice.id)
        )
    with pytest.raises(TooManyAttempts):
        reports.report_file(
            reporter=alice, target_id=bob.id, limit=limits.report(alice.id)
        )
    assert r.zcard(keys.reports_open()) == 2


def test_reports_by_and_about_a_deleted_account_stay(users):
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    status = services.status_create(author=bob, text="rude words")
    about = reports.report_file(
        reporter=alice, target_id=bob.id, status_ids=[status.id]
    )
    by = reports.report_file(reporter=bob, target_id=carol.id)
    answer = logged_in_client("bob").post("/settings/delete/", {"password": PASSWORD})
    assert answer.status_code == 302
    run_jobs()
    assert Client().get("/u/bob/").status_code == 404
    kept = reports.reports_list()
    assert [r.id for r in kept] == [about.id, by.id]
    assert kept[0].statuses[0].text == "rude words"
    standing = reports.standing_get(kept)
    assert bob.id not in standing.users and alice.id in standing.users
    assert standing.statuses == frozenset()


@pytest.mark.real_redis
def test_parallel_reports_never_pass_the_cap_nor_share_an_id(users, settings):
    from concurrent.futures import ThreadPoolExecutor

    settings.REPORTS_OPEN_MAX = 5
    alice, bob = users["alice"], users["bob"]

    def attempt(_) -> int | None:
        try:
            return reports.report_file(reporter=alice, target_id=bob.id).id
        except ReportsFull:
            return None

    with ThreadPoolExecutor(8) as pool:
        ids = list(pool.map(attempt, range(20)))
    filed = sorted(i for i in ids if i is not None)
    # Five filed, each its own id (a race may spend an id: filing takes it, then
    # finds the queue full).
    assert len(set(filed)) == len(filed) == 5
    assert sorted(r.id for r in reports.reports_list()) == filed

    def settle(_) -> int:
        return reports.report_settle(rid=filed[2])

    with ThreadPoolExecutor(8) as pool:
        outcomes = list(pool.map(settle, range(8)))
    assert outcomes.count(reports.SETTLED) == 1
    assert outcomes.count(reports.ALREADY) == 7


def test_a_lost_counter_never_overwrites_a_report(users, r):
    # The id counter is one key; were it lost (restored from an older dump, deleted
    # by hand), a new report must not be written over an old one's hash: the old
    # report (its comment, its settled state) stays, and the new one is refused
    # with a message rather than merged into it.
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    first = reports.report_file(reporter=alice, target_id=bob.id, comment="first")
    reports.report_settle(rid=first.id, note="handled")
    r.delete(keys.report_ids())
    with pytest.raises(reports.ReportIdTaken, match="already"):
        reports.report_file(reporter=carol, target_id=alice.id, comment="second")
    kept = reports.report_get(rid=first.id)
    assert (kept.reporter, kept.target, kept.comment) == ("alice", "bob", "first")
    assert kept.note == "handled"
    assert reports.reports_list() == []


def test_a_refused_report_costs_no_attempt(users, settings):
    # A status ticked and deleted before the form was sent is refused (404): the
    # reporter sends again without it, and that is not counted against them.
    settings.RATE_LIMIT_REPORT = "1/1h"
    alice, bob = users["alice"], users["bob"]
    gone = services.status_create(author=bob, text="soon gone")
    services.status_delete(user=bob, sid=gone.id)
    run_jobs()
    with pytest.raises(NotFound):
        reports.report_file(
            reporter=alice,
            target_id=bob.id,
            status_ids=[gone.id],
            limit=limits.report(alice.id),
        )
    filed = reports.report_file(
        reporter=alice, target_id=bob.id, limit=limits.report(alice.id)
    )
    assert filed.target == "bob"


def test_a_repost_of_one_hidden_from_the_reporter_cannot_be_flagged(users):
    # Bob reposts carol, who blocks alice: alice cannot see carol's words, so her
    # report cannot flag bob's repost of them (the copy would hold them).
    alice, bob, carol = users["alice"], users["bob"], users["carol"]
    original = services.status_create(author=carol, text="carol's secret plans")
    blocks.block_create(blocker=carol, blocked_id=alice.id)
    repost = social.status_repost(user=bob, sid=original.id)
    run_jobs()
    with pytest.raises(NotFound):
        reports.report_file(reporter=alice, target_id=bob.id, status_ids=[repost.id])
    assert reports.reports_list() == []


def test_one_may_flag_the_statuses_of_someone_one_blocked(users):
    # Block, then report: the threats are what the operators must read. Mastodon
    # refuses only statuses of an account that blocks the reporter.
    alice, bob = users["alice"], users["bob"]
    threat = services.status_create(author=bob, text="I know where you live")
    blocks.block_create(blocker=alice, blocked_id=bob.id)
    filed = reports.report_file(
        reporter=alice, target_id=bob.id, status_ids=[threat.id]
    )
    assert [s.text for s in filed.statuses] == ["I know where you live"]
