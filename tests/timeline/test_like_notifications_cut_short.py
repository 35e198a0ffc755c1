"""A like cut short by Redis (a round trip never sent, or its reply lost): the like
stands, and its author is still told "X liked your status" once the fan-out
worker has run the like's job (due JOB_FOLLOW_GRACE_SECONDS after the like: a
request that finishes takes it back); an unlike that races the telling leaves no
notification behind. (`timeline.social`: the like's job, queued with the like in
the status's slot.) A like or an unlike that finished leaves no job behind."""

from __future__ import annotations

import pytest
from django.conf import settings

from accounts.selectors import user_get_by_username
from config import cluster, pipelines
from tests.helpers import (
    cut_short,
    logged_in_client,
    make_user,
    notifications_shown,
    run_jobs,
)
from timeline import blocks, jobs, keys, notifications, services, social


def run_jobs_after_grace() -> None:
    """Run the jobs due once a request's grace is over, as a worker then would."""
    later = jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1
    run_jobs(sweep=True, now=later)


def runs(script):
    """A predicate: the round trip runs this Lua script."""

    def match(commands) -> bool:
        return any(
            len(c) > 1 and str(c[0]).upper() == "EVALSHA" and c[1] == script.sha
            for c in commands
        )

    return match


@pytest.fixture
def author_status():
    author = make_user("author")
    make_user("fan")
    return services.status_create(author=author, text="like me")


def liked_texts() -> list[str]:
    return [t for t in notifications_shown(logged_in_client("author")) if "liked" in t]


def test_a_like_whose_notification_is_never_sent_still_tells_its_author(
    r, author_status
):
    """The fan's like answers 503 after it was counted: the like stands, and once
    the worker ran the author reads "@fan liked your status". The fan, seeing it
    liked, may try again: "already liked", and still one notification."""
    fan = logged_in_client("fan", raise_request_exception=False)
    with cut_short(runs(notifications._NOTIFY), after=False) as fired:
        response = fan.post(f"/s/{author_status.id}/like/")
    assert fired and response.status_code == 503
    assert liked_texts() == []  # nothing told yet: the job owes it
    run_jobs()
    assert liked_texts() == []  # its request may still be finishing
    assert fan.post(f"/s/{author_status.id}/like/").status_code == 302
    run_jobs_after_grace()
    fan_id = user_get_by_username(username="fan").id
    assert r.zscore(keys.likes(author_status.id), fan_id) is not None
    assert liked_texts() == ["@fan liked your status. like me"]


def test_a_like_whose_reply_is_lost_after_it_was_counted_still_tells_its_author(
    r, author_status
):
    """The reply of the like's own step is lost (it ran: the like is counted), so
    the request never reached the notification; the worker tells the author."""
    fan = logged_in_client("fan", raise_request_exception=False)
    with cut_short(runs(social._COUNTED_ADD), after=True) as fired:
        response = fan.post(f"/s/{author_status.id}/like/")
    assert fired and response.status_code == 503
    run_jobs_after_grace()
    assert r.hget(keys.status(author_status.id), "likes") == "1"
    assert liked_texts() == ["@fan liked your status. like me"]


def test_a_like_cut_short_tells_nothing_once_undone_or_across_a_block(r, author_status):
    """The worker tells only of a like that stands, between people who do not
    block each other: undone before the worker ran, or a block that came between,
    and the author reads nothing. (A guard of the worker's checks: without the
    like's job nothing is told here either.)"""
    make_user("other")
    for name in ("fan", "other"):
        client = logged_in_client(name, raise_request_exception=False)
        with cut_short(runs(notifications._NOTIFY), after=False) as fired:
            response = client.post(f"/s/{author_status.id}/like/")
        assert fired and response.status_code == 503
    unlike = logged_in_client("fan").post(f"/s/{author_status.id}/unlike/")
    assert unlike.status_code == 302
    author = user_get_by_username(username="author")
    other = user_get_by_username(username="other")
    blocks.block_create(blocker=author, blocked_id=other.id)
    run_jobs_after_grace()
    assert liked_texts() == []
    assert r.exists(keys.notifications(author.id)) == 0


def test_an_unlike_that_lands_before_the_likes_notification_takes_it_back(
    r, author_status
):
    """The fan likes and at once takes it back, and the unlike's steps all land
    before the like's notification reaches the author's store: the author is left
    with no "liked your status" (neither by the request nor by the worker)."""
    fan = user_get_by_username(username="fan")
    original = pipelines._exchange, cluster._exchange
    raced = []

    def wrap(send):
        def exchange(node, stack):
            if not raced and runs(notifications._NOTIFY)([a for a, _ in stack]):
                raced.append(True)
                # The unlike runs in full while the like's telling is on the way.
                with pytest.MonkeyPatch.context() as m:
                    m.setattr(pipelines, "_exchange", original[0])
                    m.setattr(cluster, "_exchange", original[1])
                    assert social.status_unlike(user=fan, sid=author_status.id)
            return send(node, stack)

        return exchange

    with pytest.MonkeyPatch.context() as m:
        m.setattr(pipelines, "_exchange", wrap(original[0]))
        m.setattr(cluster, "_exchange", wrap(original[1]))
        assert social.status_like(user=fan, sid=author_status.id) is True
    assert raced
    assert liked_texts() == []
    run_jobs_after_grace()
    assert liked_texts() == []
    assert r.exists(keys.notifications(author_status.author_id)) == 0
    assert r.zcard(keys.likes(author_status.id)) == 0


def test_a_like_and_an_unlike_that_finished_leave_no_job_to_the_workers(
    r, author_status
):
    """The request did the job's work itself (told the author, then took it
    back), so it takes back the job it queued: no worker runs anything for it."""
    fan = logged_in_client("fan")
    slot = social._status_slot(author_status.id)
    assert fan.post(f"/s/{author_status.id}/like/").status_code == 302
    assert liked_texts() == ["@fan liked your status. like me"]
    assert jobs.queued_ids(slot=slot, prefix="like:") == []
    assert fan.post(f"/s/{author_status.id}/unlike/").status_code == 302
    assert liked_texts() == []
    assert jobs.queued_ids(slot=slot, prefix="like:") == []
    run_jobs_after_grace()
    assert liked_texts() == []
