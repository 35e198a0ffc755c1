"""A like cut short by Redis (a round trip never sent, or its reply lost): the like
stands, and its author is still told "X liked your status" once the fan-out
worker has run the like's job (due JOB_FOLLOW_GRACE_SECONDS after the like: a
request that finishes takes it back); an unlike that races the telling leaves no
notification behind. (`timeline.social`: the like's job, queued with the like in
the status's slot.) A like or an unlike that finished leaves no job behind."""

from __future__ import annotations

import contextlib

import pytest
import redis
from django.conf import settings

from accounts.domain import User
from accounts.selectors import user_get_by_username
from config import cluster, pipelines
from config.pipelines import pipeline_run
from config.redis import get_redis
from tests.helpers import (
    cut_short,
    logged_in_client,
    make_user,
    notifications_shown,
    run_jobs,
)
from timeline import blocks, fanout, jobs, keys, notifications, services, social
from timeline.domain import Status


def _later() -> int:
    return jobs.now_ms() + settings.JOB_FOLLOW_GRACE_SECONDS * 1000 + 1


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


# Races between a like's request, an unlike's and a worker, each step a round trip
# of its own as on a Cluster (on one server a pipeline's stages go in one).


@contextlib.contextmanager
def hook(predicate, action, *, before=False):
    """Run `action` once, right before / right after the first round trip matching,
    while in the block; yields a list that is not empty once it ran."""
    originals = pipelines._exchange, cluster._exchange
    done = []

    def wrap(send):
        def exchange(node, stack):
            if done or not predicate([a for a, _ in stack]):
                return send(node, stack)
            done.append(1)
            if before:
                action()
                return send(node, stack)
            replies = send(node, stack)()
            action()
            return lambda: replies

        return exchange

    with pytest.MonkeyPatch.context() as m:
        m.setattr(pipelines, "_exchange", wrap(originals[0]))
        m.setattr(cluster, "_exchange", wrap(originals[1]))
        yield done


def like_cut_short_after_its_count(status: Status) -> tuple[User, int, int]:
    """The fan's like, whose reply is lost once it was counted: its job is left.
    The fan, the status's id and its slot."""
    sid = status.id
    client = logged_in_client("fan", raise_request_exception=False)
    with cut_short(runs(social._COUNTED_ADD), after=True) as fired:
        assert client.post(f"/s/{sid}/like/").status_code == 503
    assert fired
    return user_get_by_username(username="fan"), sid, social._status_slot(sid)


def taken_by_a_worker(slot: int, *, just_before, of) -> list:
    """Run a request `of()` (which must change something) while a worker takes
    the slot's job just before the request's round trip that runs `just_before`;
    the jobs the worker took."""
    held: list = []
    with hook(
        runs(just_before),
        lambda: held.extend(jobs.claim(slot=slot, limit=1, now=_later())),
        before=True,
    ) as done:
        assert of() is True
    assert done and held
    return held


def final_state(r, sid, fan):
    run_jobs_after_grace()
    return r.zscore(keys.likes(sid), fan.id) is not None, liked_texts()


def test_a_relike_cut_short_inside_an_unlike_that_found_no_like_is_told(
    r, author_status
):
    """A second unlike finds no like (its first step, a round trip of its own on
    a Cluster); a like then counts and tells the author and dies before taking
    its job back; the unlike goes on: it takes the notification back, and must
    not take back the like's job. The like stands: the author is told again."""
    fan = user_get_by_username(username="fan")
    sid = author_status.id
    assert social.status_like(user=fan, sid=sid)
    assert social.status_unlike(user=fan, sid=sid)

    def relike_cut_short():
        with (
            cut_short(runs(jobs._CANCEL), after=False) as fired,
            pytest.raises(redis.ConnectionError),
        ):
            social.status_like(user=fan, sid=sid)
        assert fired

    with hook(runs(social._COUNTED_REMOVE), relike_cut_short) as done:
        assert social.status_unlike(user=fan, sid=sid) is False
    assert done
    assert final_state(r, sid, fan) == (True, ["@fan liked your status. like me"])


def test_a_like_in_full_between_the_steps_of_an_unlike_that_found_none_is_told(
    r, author_status
):
    """A second unlike finds no like; a like then runs in full between its steps;
    the unlike goes on and takes the notification back. The like stands, so the
    job its first step queued, which the like could not take back, tells the
    author again. (Each step a round trip of its own, as on a Cluster.)"""
    fan = user_get_by_username(username="fan")
    author = author_status.author_id
    sid = author_status.id
    slot, jid = social._status_slot(sid), social.like_job_id(fan.id, sid)
    assert social.status_like(user=fan, sid=sid)
    assert social.status_unlike(user=fan, sid=sid)
    # The second unlike's first step: no like to remove (its job is queued).
    removed = pipeline_run(
        lambda p: social._counted_remove_queue(
            p, sid, keys.likes(sid), fan.id, "likes", job=jid, owner="unlike"
        )
    )
    assert removed == [0]
    # A like, in full: recorded, counted (the job queued again), told, and its
    # job taken back, which it may not be: the unlike queued it.
    get_redis().zadd(keys.liked(fan.id), {sid: 1}, nx=True)
    added = social._counted_add(
        sid, keys.likes(sid), fan.id, 1, "likes", job=jid, owner="like"
    )
    assert added == 1
    pipeline_run(
        lambda p: notifications.notify_queue(
            p,
            recipient=author,
            kind="like",
            actor=fan.id,
            sid=sid,
            at_ms=1,
            conversation=sid,
        )
    )
    pipeline_run(
        lambda p: jobs.cancel_unless_again_queue(p, slot=slot, jid=jid, owner="like")
    )
    # The unlike's next steps: the notification taken back, then its job.
    pipeline_run(
        lambda p: notifications.unnotify_queue(
            p, recipient=author, kind="like", actor=fan.id, sid=sid
        )
    )
    pipeline_run(
        lambda p: jobs.cancel_unless_again_queue(p, slot=slot, jid=jid, owner="unlike")
    )
    assert final_state(r, sid, fan) == (True, ["@fan liked your status. like me"])


def test_an_unlike_leaves_the_job_a_worker_holds_so_a_late_untell_is_undone(
    r, author_status
):
    """A like cut short leaves its job; an unlike queues it again; the job falls
    due and a worker takes it just before the unlike takes it back (and must not),
    and reads "no like"; a like then runs in full, and the worker's untelling
    lands last. The like stands: the author is told in the end."""
    fan, sid, slot = like_cut_short_after_its_count(author_status)
    held = taken_by_a_worker(
        slot,
        just_before=jobs._CANCEL,
        of=lambda: social.status_unlike(user=fan, sid=sid),
    )
    original_untell = social._like_untell

    def slow_untell(**kw):
        assert social.status_like(user=fan, sid=sid) is True  # a like, in full
        original_untell(**kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(social, "_like_untell", slow_untell)
        fanout.job_run(held[0])
    assert final_state(r, sid, fan) == (True, ["@fan liked your status. like me"])


def test_a_like_leaves_the_job_a_worker_holds_so_a_lost_telling_is_undone(
    r, author_status
):
    """A like cut short leaves its job; an unlike, then a like run; a worker takes
    the job as that like tells, and reads the like; the like's request must not
    take the job back from it. An unlike then runs in full, and the worker's
    telling loses its reply: its retry undoes it. No "liked your status" stays."""
    fan, sid, slot = like_cut_short_after_its_count(author_status)
    assert social.status_unlike(user=fan, sid=sid) is True
    held = taken_by_a_worker(
        slot,
        just_before=notifications._NOTIFY,
        of=lambda: social.status_like(user=fan, sid=sid),
    )
    # The worker read that the like stands; before it tells, an unlike runs.
    orig = social.like_tell

    def tell_after_unlike(**kw):
        assert social.status_unlike(user=fan, sid=sid) is True
        with cut_short(runs(notifications._NOTIFY), after=True):
            orig(**kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(social, "like_tell", tell_after_unlike)
        assert fanout.job_run(held[0]) is False
    assert final_state(r, sid, fan) == (False, [])


def test_an_unlike_stalled_past_the_grace_leaves_a_newer_like_told(r, author_status):
    """An unlike's request stalls after its first step (the like removed, its job
    queued) for longer than JOB_FOLLOW_GRACE_SECONDS: a worker runs the job (no
    like: nothing to tell), and the fan likes again, in full (told, its own job
    taken back). Then the stalled unlike goes on and takes back "the" notification,
    which is the new like's. The new like stands, so the author must still read
    it. (The stall falls between round trips of the unlike, as on a Cluster; on
    one server its steps go in one, so there the like simply comes after it.)"""
    fan = user_get_by_username(username="fan")
    sid = author_status.id
    assert social.status_like(user=fan, sid=sid)

    def grace_over_then_a_like():
        run_jobs_after_grace()
        assert social.status_like(user=fan, sid=sid) is True
        assert liked_texts() == ["@fan liked your status. like me"]

    with hook(runs(social._COUNTED_REMOVE), grace_over_then_a_like) as done:
        assert social.status_unlike(user=fan, sid=sid) is True
    assert done
    assert final_state(r, sid, fan) == (True, ["@fan liked your status. like me"])


def test_an_unrepost_stalled_past_its_jobs_leaves_a_newer_repost_told(r, author_status):
    """The same for a repost: the fan's undo of a repost stalls just before it
    takes the author's "reposted your status" back; meanwhile the jobs run and the
    fan reposts again, in full (the author told by the request and by the new
    repost's job). The stalled undo then takes back "the" notification, which is
    the new repost's. The new repost stands, so the author must still read it."""
    fan = user_get_by_username(username="fan")
    sid = author_status.id
    assert social.status_repost(user=fan, sid=sid) is not None
    run_jobs()

    def jobs_then_a_repost():
        run_jobs_after_grace()
        assert social.status_repost(user=fan, sid=sid) is not None
        run_jobs_after_grace()

    with hook(runs(notifications._UNNOTIFY), jobs_then_a_repost, before=True) as done:
        assert social.status_unrepost(user=fan, sid=sid) is True
    assert done
    run_jobs_after_grace()
    assert r.zscore(keys.reposts(sid), fan.id) is not None
    told = notifications_shown(logged_in_client("author"))
    assert told == ["@fan reposted your status. like me"]


def test_an_undone_reposts_unlink_job_run_late_leaves_a_newer_repost_told(
    r, author_status
):
    """The fan undoes a repost and reposts again at once; two workers run the
    jobs, and the undone repost's unlink job (which takes back its "reposted your
    status", as for any deleted repost) ends after the new repost told the author.
    The new repost stands, so the author must still read it."""
    fan = user_get_by_username(username="fan")
    sid = author_status.id
    assert social.status_repost(user=fan, sid=sid) is not None
    run_jobs()
    assert social.status_unrepost(user=fan, sid=sid) is True
    assert social.status_repost(user=fan, sid=sid) is not None
    slot = social.keys.slot_of_user(fan.id)
    held = jobs.claim(slot=slot, limit=100, now=_later())
    unlinks = [job for job in held if job.id.startswith("unlink:")]
    assert unlinks
    for job in sorted(held, key=lambda job: job.id.startswith("unlink:")):
        fanout.job_run(job)
    run_jobs_after_grace()
    assert r.zscore(keys.reposts(sid), fan.id) is not None
    told = notifications_shown(logged_in_client("author"))
    assert told == ["@fan reposted your status. like me"]


def test_a_repost_told_again_by_a_stalled_undo_is_not_left_once_undone(
    r, author_status
):
    """The stalled undo above reads that a newer repost stands and tells its
    author again; before that telling lands the fan undoes the newer repost too,
    in full, and its unlink job runs. No "reposted your status" may stay, nor an
    unread one the page hides. (Found by review.)"""
    fan = user_get_by_username(username="fan")
    sid = author_status.id
    assert social.status_repost(user=fan, sid=sid) is not None
    run_jobs()
    armed: list[int] = []

    def jobs_then_a_repost():
        run_jobs_after_grace()
        newer = social.status_repost(user=fan, sid=sid)
        assert newer is not None
        run_jobs_after_grace()
        armed.append(newer.id)

    original_notify = social.status_notify
    fired: list[int] = []

    def stalled_notify(*, status):
        if armed and status.id == armed[0] and not fired:
            fired.append(1)
            # The undo stalls here; the fan undoes the newer repost in full and a
            # worker runs its unlink job.
            assert social.status_unrepost(user=fan, sid=sid) is True
            run_jobs_after_grace()
            assert notifications_shown(logged_in_client("author")) == []
        original_notify(status=status)

    with (
        hook(runs(notifications._UNNOTIFY), jobs_then_a_repost, before=True) as done,
        pytest.MonkeyPatch.context() as mp,
    ):
        mp.setattr(social, "status_notify", stalled_notify)
        assert social.status_unrepost(user=fan, sid=sid) is True
    assert done and fired
    run_jobs_after_grace()
    assert r.zscore(keys.reposts(sid), fan.id) is None
    assert notifications_shown(logged_in_client("author")) == []
    assert r.exists(keys.notifications(author_status.author_id)) == 0


@pytest.mark.cluster
def test_a_likes_untelling_stalled_past_the_grace_leaves_a_newer_like_told(
    r, author_status
):
    """A like's request tells the author, an unlike runs in full before its check,
    so the check finds no like, and the request stalls before its untelling: the
    job runs past the grace and the fan likes again, in full. The late untelling
    takes the new like's notification back; the new like stands, so the author
    must still read it. (Found by review; on one server the like's telling and
    its check are one round trip, so an unlike cannot come between.)"""
    fan = user_get_by_username(username="fan")
    sid = author_status.id
    original_untell = social._like_untell
    fired: list[int] = []

    def stalled_untell(**kw):
        if not fired:
            fired.append(1)
            run_jobs_after_grace()
            assert social.status_like(user=fan, sid=sid) is True
            assert liked_texts() == ["@fan liked your status. like me"]
        original_untell(**kw)

    with (
        hook(
            runs(notifications._NOTIFY),
            lambda: social.status_unlike(user=fan, sid=sid),
        ) as done,
        pytest.MonkeyPatch.context() as mp,
    ):
        mp.setattr(social, "_like_untell", stalled_untell)
        assert social.status_like(user=fan, sid=sid) is True
    assert done and fired
    assert final_state(r, sid, fan) == (True, ["@fan liked your status. like me"])
