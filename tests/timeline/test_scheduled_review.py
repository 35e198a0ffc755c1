"""Review of scheduled statuses: a move past the day's cap, a cancel or move of a
status its job has started to post, a job rerun after its status was deleted, a
cancelled failed job."""

from __future__ import annotations

import time

import pytest
from django.test import Client

from tests.helpers import make_user, page, run_jobs
from tests.timeline.test_edits import texts
from timeline import fanout, jobs, keys, scheduled, services
from timeline.domain import NotFound
from timeline.scheduled import ScheduleRefused


@pytest.fixture(autouse=True)
def _backend(redis_backend, settings):
    settings.RATE_LIMIT_POST = "off"
    settings.RATE_LIMIT_FOLLOW = "off"


def at(minutes: float) -> float:
    return time.time() + minutes * 60


def when_due(entry, extra_ms: int = 1) -> int:
    return fanout.run_pending(now=int(entry.at * 1000) + extra_ms, sweep=True)


def test_a_move_keeps_the_days_cap(r, monkeypatch):
    """25 a UTC day is checked when scheduled, and must be when moved: else any
    number can be gathered on one day, one move at a time."""
    alice = make_user("alice")
    monkeypatch.setattr(scheduled, "SCHEDULED_PER_DAY", 2)
    day = (time.time() // 86400 + 2) * 86400
    for n in range(2):
        scheduled.status_schedule(author=alice, text=f"{n}", at=day + 3600 * n)
    other = scheduled.status_schedule(author=alice, text="other", at=day + 86400)
    with pytest.raises(ScheduleRefused, match="on that day"):
        scheduled.scheduled_move(user=alice, n=other.id, at=day + 7200)
    # Moved within its own day, it does not count itself.
    scheduled.scheduled_move(user=alice, n=other.id, at=day + 86400 + 60)
    first = scheduled.scheduled_list(user=alice)[0]
    scheduled.scheduled_move(user=alice, n=first.id, at=day + 60)


def test_a_cancel_while_a_worker_posts_it_is_refused(r, monkeypatch):
    """The worker read the entry and is posting it: a cancel then said "Cancelled:
    it will not be posted" and the status was posted all the same."""
    alice = make_user("alice")
    entry = scheduled.status_schedule(author=alice, text="posted anyway", at=at(10))
    real = services.status_create
    answers: list[bool] = []

    def cancel_then_post(**kw):
        # The worker has reserved the id and is about to post: the user cancels.
        try:
            answers.append(scheduled.scheduled_cancel(user=alice, n=entry.id))
        except ScheduleRefused:
            answers.append(False)
        return real(**kw)

    monkeypatch.setattr(scheduled.services, "status_create", cancel_then_post)
    when_due(entry)
    monkeypatch.undo()
    posted = texts(page(Client(), "/u/alice/"))
    assert answers == [False] or posted == []  # told cancelled -> not posted


def run_once(uid: int, entry) -> None:
    """One worker's run of the status's job, at its time (no retry here)."""
    (job,) = jobs.claim(
        slot=keys.slot_of_user(uid), limit=1, now=int(entry.at * 1000) + 1
    )
    fanout.job_run(job)


def _post_then_fail_the_drop(r, monkeypatch, uid):
    """Make the job's HDEL of the entry fail once: it posted, then raised."""
    real = type(r).hdel
    failed: list[int] = []

    def hdel(self, key, *fields):
        if key == keys.scheduled(uid) and not failed:
            failed.append(1)
            raise ConnectionError("lost the connection after the post")
        return real(self, key, *fields)

    monkeypatch.setattr(type(r), "hdel", hdel)
    return failed


def test_no_move_of_a_status_already_posted_by_its_job(r, monkeypatch):
    """Its job posted it and raised after (it waits for its retry, its id
    reserved): a move then succeeded, and the status, already out, was posted again
    at the new time. Its entry now goes in the step that publishes it: it is no
    longer waiting, to move or to cancel."""
    alice = make_user("alice")
    entry = scheduled.status_schedule(author=alice, text="out already", at=at(10))
    failed = _post_then_fail_the_drop(r, monkeypatch, alice.id)
    run_once(alice.id, entry)
    monkeypatch.undo()
    assert failed and texts(page(Client(), "/u/alice/")) == ["out already"]
    assert scheduled.scheduled_list(user=alice) == []
    with pytest.raises(NotFound):
        scheduled.scheduled_move(user=alice, n=entry.id, at=at(60 * 24))
    assert scheduled.scheduled_cancel(user=alice, n=entry.id) is False
    when_due(entry, extra_ms=10**8)  # its retry
    assert texts(page(Client(), "/u/alice/")) == ["out already"]


def test_a_rerun_does_not_bring_back_a_status_deleted_since(r, monkeypatch):
    """Posted, then its job raised before dropping the entry; its author deleted
    the status before the retry: the retry posted it again, with the same id."""
    alice = make_user("alice")
    entry = scheduled.status_schedule(author=alice, text="regretted", at=at(10))
    _post_then_fail_the_drop(r, monkeypatch, alice.id)
    run_once(alice.id, entry)
    monkeypatch.undo()
    (sid,) = [int(s) for s in r.zrange(keys.posts(alice.id), 0, -1)]
    services.status_delete(user=alice, sid=sid)
    run_jobs()
    when_due(entry, extra_ms=10**8)  # its retry
    assert texts(page(Client(), "/u/alice/")) == []


def test_a_failed_job_cancelled_leaves_the_failed_list(r, settings, monkeypatch):
    """A job that failed for good, its status cancelled: `timelines check` kept
    reporting it as a failed job."""
    alice = make_user("alice")
    entry = scheduled.status_schedule(author=alice, text="broken", at=at(10))
    monkeypatch.setattr(scheduled.ids, "status_ids_take", lambda **kw: 1 / 0)
    for attempt in range(settings.JOB_MAX_ATTEMPTS + 1):
        when_due(entry, extra_ms=1 + attempt * 10**7)
    monkeypatch.undo()
    assert jobs.failed_ids() == [scheduled.schedule_job_id(alice.id, entry.id)]
    assert scheduled.scheduled_cancel(user=alice, n=entry.id) is True
    assert jobs.failed_ids() == []


def test_the_site_and_the_api_say_it_is_being_posted(r, monkeypatch):
    """A cancel refused: the site says so ("Not cancelled"), the API answers 422."""
    from tests.api.helpers import api_client, token_for
    from tests.helpers import logged_in_client

    alice = make_user("alice")
    entry = scheduled.status_schedule(author=alice, text="on its way", at=at(10))
    slot = keys.slot_of_user(alice.id)
    (job,) = jobs.claim(slot=slot, limit=1, now=int(entry.at * 1000) + 1)  # held
    client = logged_in_client("alice")
    done = client.post(f"/scheduled/{entry.id}/cancel/", follow=True)
    assert "Not cancelled: It is being posted right now." in done.content.decode()
    app = api_client(token_for(alice))
    refused = app.delete(f"/api/v1/scheduled_statuses/{entry.id}")
    assert refused.status_code == 422, refused.content
    fanout.job_run(job)
    assert texts(page(Client(), "/u/alice/")) == ["on its way"]
    assert app.delete(f"/api/v1/scheduled_statuses/{entry.id}").status_code == 404
