"""Scheduled statuses: written now, posted by a durable job at the time picked,
once, as its author would have posted it; until then listed for its author, who may
move or cancel it."""

from __future__ import annotations

import re
import time

import pytest
from django.test import Client

from tests.helpers import logged_in_client, make_user, page, run_jobs
from tests.timeline.test_edits import texts
from timeline import fanout, jobs, keys, scheduled, services
from timeline.domain import InvalidStatus, NotFound
from timeline.scheduled import ScheduleRefused


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


def at(minutes: float) -> float:
    return time.time() + minutes * 60


def when_due(entry) -> int:
    """Run every job due by the status's time (ms), as workers will then."""
    return fanout.run_pending(now=int(entry.at * 1000) + 1, sweep=True)


def test_a_scheduled_status_is_posted_at_its_time_once(r, people):
    alice, _ = people
    entry = scheduled.status_schedule(author=alice, text="later #news", at=at(10))
    run_jobs(sweep=True)  # not yet: due in ten minutes
    assert texts(page(Client(), "/u/alice/")) == []
    assert [s.text for s in scheduled.scheduled_list(user=alice)] == ["later #news"]
    when_due(entry)
    assert texts(page(Client(), "/u/alice/")) == ["later #news"]
    assert texts(page(logged_in_client("bob"), "/")) == ["later #news"]
    assert texts(page(Client(), "/tags/news/")) == ["later #news"]
    assert scheduled.scheduled_list(user=alice) == []
    when_due(entry)  # nothing left to run, nothing posted again
    assert texts(page(Client(), "/u/alice/")) == ["later #news"]


def test_a_job_cut_short_after_posting_posts_once(r, people, monkeypatch):
    """The worker died after the post, before the entry went: the retry posts with
    the same id, which writes the same keys: one status."""
    alice, _ = people
    entry = scheduled.status_schedule(author=alice, text="once", at=at(10))
    real = r.hdel
    died: list[int] = []

    def dying(key, *fields):
        if key == keys.scheduled(alice.id) and not died:
            died.append(1)
            raise ConnectionError("the worker died")
        return real(key, *fields)

    monkeypatch.setattr(type(r), "hdel", lambda self, *a: dying(*a))
    when_due(entry)
    monkeypatch.undo()
    assert died
    assert texts(page(Client(), "/u/alice/")) == ["once"]
    fanout.run_pending(now=int(entry.at * 1000) + 10**8, sweep=True)  # its retry
    assert texts(page(Client(), "/u/alice/")) == ["once"]
    assert r.zcard(keys.posts(alice.id)) == 1
    assert scheduled.scheduled_list(user=alice) == []


def test_cancelled_it_is_never_posted_and_moved_it_waits(r, people):
    alice, _ = people
    first = scheduled.status_schedule(author=alice, text="cancelled", at=at(10))
    second = scheduled.status_schedule(author=alice, text="moved", at=at(10))
    assert scheduled.scheduled_cancel(user=alice, n=first.id) is True
    assert scheduled.scheduled_cancel(user=alice, n=first.id) is False
    moved = scheduled.scheduled_move(user=alice, n=second.id, at=at(60))
    when_due(first)
    assert texts(page(Client(), "/u/alice/")) == []
    when_due(moved)
    assert texts(page(Client(), "/u/alice/")) == ["moved"]
    with pytest.raises(NotFound):
        scheduled.scheduled_move(user=alice, n=second.id, at=at(90))


def test_the_rules_and_the_caps(r, people, monkeypatch):
    alice, bob = people
    with pytest.raises(ScheduleRefused, match="at least 5 minutes"):
        scheduled.status_schedule(author=alice, text="too soon", at=at(2))
    with pytest.raises(InvalidStatus):
        scheduled.status_schedule(author=alice, text="  ", at=at(10))
    monkeypatch.setattr(scheduled, "SCHEDULED_PER_DAY", 2)
    monkeypatch.setattr(scheduled, "SCHEDULED_MAX", 3)
    day = (time.time() // 86400 + 2) * 86400  # the day after tomorrow, UTC
    for n in range(2):
        scheduled.status_schedule(author=alice, text=f"{n}", at=day + 3600 * n)
    with pytest.raises(ScheduleRefused, match="on that day"):
        scheduled.status_schedule(author=alice, text="third", at=day + 7200)
    scheduled.status_schedule(author=alice, text="next day", at=day + 86400)
    with pytest.raises(ScheduleRefused, match="as many as may wait"):
        scheduled.status_schedule(author=alice, text="fourth", at=day + 2 * 86400)
    assert len(scheduled.scheduled_list(user=alice)) == 3
    assert scheduled.scheduled_list(user=bob) == []  # each their own


def test_a_scheduled_reply_answers_its_status_or_stands_alone(r, people):
    alice, bob = people
    parent = services.status_create(author=bob, text="a question").id
    gone = services.status_create(author=bob, text="deleted soon").id
    answer = scheduled.status_schedule(
        author=alice, text="@bob an answer", at=at(10), reply_to=parent
    )
    orphan = scheduled.status_schedule(
        author=alice, text="@bob too late", at=at(10), reply_to=gone
    )
    services.status_delete(user=bob, sid=gone)
    when_due(max(answer, orphan, key=lambda entry: entry.at))
    html = page(Client(), f"/s/{parent}/")
    assert "an answer" in html
    assert sorted(texts(page(Client(), "/u/alice/"))) == [
        "@bob an answer",
        "@bob too late",  # its status deleted: posted on its own, not lost
    ]
    assert f"/s/{gone}/" not in page(Client(), "/u/alice/")
    assert orphan.reply_to == gone
    with pytest.raises(NotFound):
        scheduled.status_schedule(
            author=alice, text="to nothing", at=at(10), reply_to=gone
        )


def test_a_deleted_accounts_scheduled_statuses_go_with_it(r, people):
    alice, _ = people
    entry = scheduled.status_schedule(author=alice, text="never", at=at(10))
    services.account_close(user=alice)
    run_jobs()
    when_due(entry)
    assert not r.exists(keys.scheduled(alice.id))
    assert r.zcard(keys.posts(alice.id)) == 0


def test_a_status_waiting_for_its_time_is_no_stuck_job(r, people):
    """Its job is recorded as starting when it is due: the queue's oldest age and
    `timelines repair`'s stuck jobs (created over a while ago) leave it be."""
    alice, _ = people
    scheduled.status_schedule(author=alice, text="in a week", at=at(7 * 24 * 60))
    assert jobs.older_than(age_ms=0) == []
    stats = jobs.stats()
    assert stats.scheduled == 1 and stats.oldest_age_s is None
    from django.core.management import call_command

    call_command("timelines", "repair", "--stuck-after", "0", verbosity=0)
    run_jobs(sweep=True)
    assert texts(page(Client(), "/u/alice/")) == []


def local_field(moment: float, offset_minutes: int = 0) -> str:
    """`moment` as a datetime-local field shows it, `offset_minutes` from UTC."""
    from datetime import UTC, datetime, timedelta

    shown = datetime.fromtimestamp(moment, tz=UTC) + timedelta(minutes=offset_minutes)
    return shown.strftime("%Y-%m-%dT%H:%M")


def test_the_compose_box_schedules_in_the_writers_own_time(people):
    """The page's script sends the writer's distance from UTC (`tz`, as JavaScript's
    getTimezoneOffset: -330 in India); without it the time is UTC."""
    alice, _ = people
    client = logged_in_client("alice")
    target = (time.time() // 60 + 120) * 60  # two hours on, to the minute
    response = client.post(
        "/post/",
        {
            "text": "from India",
            "schedule": "on",
            "scheduled_at": local_field(target, 330),
            "tz": "-330",
        },
    )
    assert response.status_code == 302 and response.url == "/scheduled/"
    html = page(client, "/scheduled/")
    assert "Scheduled: it will be posted on" in html and "from India" in html
    client.post(
        "/post/",
        {"text": "in UTC", "schedule": "on", "scheduled_at": local_field(target)},
    )
    waiting = scheduled.scheduled_list(user=alice)
    assert [(s.text, s.at) for s in waiting] == [
        ("from India", target),
        ("in UTC", target),
    ]
    # Unticked, a time typed before is left behind: posted now.
    client.post("/post/", {"text": "right away", "scheduled_at": local_field(target)})
    assert texts(page(Client(), "/u/alice/")) == ["right away"]


def test_a_refused_time_keeps_what_was_typed(people):
    client = logged_in_client("alice")
    soon = local_field(time.time() + 60)
    response = client.post(
        "/post/",
        {
            "text": "too soon",
            "cw": "on",
            "spoiler": "CW",
            "schedule": "on",
            "scheduled_at": soon,
        },
    )
    assert response.status_code == 400
    html = response.content.decode()
    assert "Pick a time at least 5 minutes from now." in html
    assert "too soon</textarea>" in html and f'value="{soon}"' in html
    assert 'id="id_schedule" class="schedule-toggle" checked' in html
    blank = client.post("/post/", {"text": "when?", "schedule": "on"})
    assert (
        blank.status_code == 400 and "Pick a date and a time." in blank.content.decode()
    )
    assert scheduled.scheduled_list(user=people[0]) == []


def test_the_list_cancels_with_a_csrf_protected_post(people):
    alice, _ = people
    entry = scheduled.status_schedule(
        author=alice, text="<b>bold</b> plan", at=at(30), spoiler="Soon"
    )
    client = logged_in_client("alice", enforce_csrf_checks=True)
    html = page(client, "/scheduled/")
    assert "&lt;b&gt;bold&lt;/b&gt; plan" in html and "<b>bold</b>" not in html
    assert "Content warning: <bdi>Soon</bdi>" in html
    assert client.post(f"/scheduled/{entry.id}/cancel/").status_code == 403
    assert client.get(f"/scheduled/{entry.id}/cancel/").status_code == 405
    assert Client().get("/scheduled/").status_code == 302  # to log in
    assert page(logged_in_client("bob"), "/scheduled/").count("plan") == 0
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', html)[1]
    done = client.post(f"/scheduled/{entry.id}/cancel/", {"csrfmiddlewaretoken": token})
    assert done.status_code == 302
    assert "Nothing is waiting." in page(client, "/scheduled/")
    when_due(entry)
    assert texts(page(Client(), "/u/alice/")) == []


def test_a_schedule_refused_by_a_cap_costs_no_post(people, settings, monkeypatch):
    """The caps are checked before the posting budget is taken (and again in the
    atomic step): a refused schedule leaves the budget as it was."""
    from accounts import limits

    alice, _ = people
    settings.RATE_LIMIT_POST = "2/1h"
    monkeypatch.setattr(scheduled, "SCHEDULED_MAX", 1)
    budget = limits.post(alice.id)
    first = scheduled.status_schedule(author=alice, text="1", at=at(10), limit=budget)
    for _ in range(3):
        with pytest.raises(ScheduleRefused, match="as many as may wait"):
            scheduled.status_schedule(author=alice, text="2", at=at(10), limit=budget)
    scheduled.scheduled_cancel(user=alice, n=first.id)
    again = scheduled.status_schedule(author=alice, text="3", at=at(10), limit=budget)
    assert [s.text for s in scheduled.scheduled_list(user=alice)] == [again.text]
