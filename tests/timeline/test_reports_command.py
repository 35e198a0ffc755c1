"""`manage.py reports`: what an operator reads of the open and settled reports,
and settling one (once), with the flagged statuses' copies and whether each still
stands."""

from __future__ import annotations

import io

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from tests.helpers import PASSWORD, logged_in_client, make_user, run_jobs
from timeline import edits, reports, services


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_REPORT = "off"


def run(*args) -> str:
    out = io.StringIO()
    call_command("reports", *args, stdout=out)
    return out.getvalue()


@pytest.fixture
def filed():
    alice, bob, carol = make_user("alice"), make_user("bob"), make_user("carol")
    rude = services.status_create(author=bob, text="you are awful")
    gone = services.status_create(author=bob, text="I know where you live")
    first = reports.report_file(
        reporter=alice,
        target_id=bob.id,
        category="spam",
        comment="He threatens me",
        status_ids=[rude.id, gone.id],
    )
    second = reports.report_file(reporter=carol, target_id=bob.id)
    edits.status_edit(user=bob, sid=rude.id, text="have a nice day")
    services.status_delete(user=bob, sid=gone.id)
    run_jobs()
    return first, second, rude, gone


def test_the_list_shows_open_reports_oldest_first_with_their_copies(filed):
    first, second, rude, gone = filed
    out = run()
    assert out.index(f"#{first.id} ") < out.index(f"#{second.id} ")
    assert "spam" in out and "comment: He threatens me" in out
    assert "by @alice (id " in out and "about @bob (id " in out
    assert f"status {rude.id} (" in out and "still up):\n    you are awful" in out
    assert f"status {gone.id} (" in out
    assert "deleted since):\n    I know where you live" in out
    assert "have a nice day" not in out  # the copy, as reported
    assert "by @carol" in out and "no comment" in out


def test_show_and_resolve_settle_a_report_once(filed):
    first, second, *_ = filed
    assert "He threatens me" in run("show", str(first.id))
    assert run("resolve", str(first.id), "--note", "warned bob") == (
        f"Report #{first.id} settled.\n"
    )
    assert run("resolve", str(first.id)) == f"Report #{first.id} is already settled.\n"
    still_open = run()
    assert f"#{first.id} " not in still_open and f"#{second.id} " in still_open
    settled = run("--settled")
    assert f"#{first.id} " in settled and "settled " in settled
    assert ": warned bob" in settled
    with pytest.raises(CommandError, match="No report #99"):
        run("resolve", "99")
    with pytest.raises(CommandError, match="needs a report id"):
        run("show")


def test_resolve_can_delete_the_flagged_statuses(filed):
    first, second, rude, gone = filed
    out = run("resolve", str(first.id), "--delete-statuses")
    assert f"Deleted status {rude.id}." in out and f"status {gone.id}" not in out
    run_jobs()
    assert Client().get(f"/s/{rude.id}/").status_code == 404


def test_a_deleted_account_shows_as_deleted(filed):
    logged_in_client("alice").post("/settings/delete/", {"password": PASSWORD})
    run_jobs()
    out = run()
    assert "by @alice (id " in out and ", deleted since)" in out


def test_none_open(redis_backend):
    assert run() == "No open reports.\n"
    assert run("--settled") == "No settled reports.\n"


def test_the_list_says_how_many_more_are_open(filed):
    # An operator told only the first --limit would think that is all of them.
    first, second, *_ = filed
    out = run("--limit", "1")
    assert f"#{first.id} " in out and f"#{second.id} " not in out
    assert out.endswith("1 more open report (raise --limit to see it).\n")
    with pytest.raises(CommandError, match="--limit"):
        run("--limit", "0")
