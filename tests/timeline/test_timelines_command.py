"""`manage.py timelines check|repair`: what a crash could leave behind is reported,
a dry run writes nothing, the repair fixes it and a second check finds nothing."""

from __future__ import annotations

import io
import threading
import time

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client

from config.redis import is_cluster
from tests.helpers import (
    logged_in_client,
    make_away,
    make_user,
    page,
    run_jobs,
    store_snapshot,
)
from timeline import blocks, counts, jobs, keys, lists, repair, services, social


def timelines(*args: str) -> tuple[str, bool]:
    """The command's output, and whether it ended in an error (exit status 1)."""
    out = io.StringIO()
    try:
        call_command("timelines", *args, stdout=out, stderr=io.StringIO())
    except CommandError as error:
        return out.getvalue() + str(error), True
    return out.getvalue(), False


def assert_repaired(r, expected_line: str) -> None:
    output, failed = timelines("check")
    assert failed and expected_line in output, output
    before = store_snapshot(r)
    output, failed = timelines("repair", "--dry-run")
    assert not failed and "Dry run: would fix" in output
    assert store_snapshot(r) == before  # a dry run writes nothing
    output, failed = timelines("repair")
    assert not failed and "; 0 left." in output, output
    output, failed = timelines("check")
    assert not failed and "No problems found." in output, output


@pytest.fixture
def people():
    alice, bob = make_user("alice"), make_user("bob")
    services.follow_create(follower=bob, followee_id=alice.id)
    return alice, bob


def test_a_fresh_seed_has_no_problems(r):
    call_command(
        "seed",
        "--users",
        "60",
        "--follows-per-user",
        "8",
        "--statuses-per-user",
        "4",
        stdout=io.StringIO(),
    )
    output, failed = timelines("check")
    assert not failed, output
    assert "No problems found." in output


def test_a_one_sided_follow_is_completed_from_the_follower_side(r, people):
    alice, bob = people
    status = services.status_create(author=alice, text="before the crash")
    run_jobs()
    carol = make_user("carol")
    # A crash after the follow's first step (its job lost with the crash too).
    r.zadd(keys.following(carol.id), {alice.id: 1})
    assert_repaired(r, "One-sided follows: 1")
    assert r.zscore(keys.followers(alice.id), carol.id) is not None
    assert r.hget(keys.follower_names(alice.id), carol.id) == "carol"
    assert r.zscore(keys.home(carol.id), status.id) is not None  # backfilled


def test_a_follower_entry_without_its_follow_is_removed(r, people):
    alice, bob = people
    dave = make_user("dave")
    r.zadd(keys.followers(alice.id), {dave.id: 1})
    r.hset(keys.follower_names(alice.id), dave.id, "dave")
    assert_repaired(r, "One-sided follows: 1")
    assert r.zscore(keys.followers(alice.id), dave.id) is None
    page = logged_in_client("alice").get("/u/alice/followers/").content.decode()
    assert "@dave" not in page and "@bob" in page


def test_references_to_deleted_statuses_are_removed(r, people):
    alice, bob = people
    status = services.status_create(author=alice, text="gone")
    run_jobs()
    r.delete(keys.status(status.id))  # a delete whose later steps never ran
    assert_repaired(r, "References to deleted statuses: 4 in 4 keys")
    for key in (
        keys.home(bob.id),
        keys.home(alice.id),
        keys.posts(alice.id),
        keys.global_partition(status.id),
    ):
        assert r.zscore(key, status.id) is None


def test_a_direct_message_whose_delete_was_cut_short_leaves_no_trace(r, people):
    """A delete that died after the message's hash went (a Cluster runs the
    author's step in a round trip of its own) left it in its author's direct
    messages and in both conversations, unread for its recipient: repair takes it
    out of them all, and the Messages page and badge are as if it never came."""
    alice, bob = people
    sid = services.status_create(author=alice, text="@bob psst", direct=True).id
    run_jobs()
    r.delete(keys.status(sid))  # a delete whose later steps never ran
    assert_repaired(r, "Deleted direct messages in conversations: 2 of 2 users")
    assert r.zscore(keys.direct(alice.id), sid) is None
    for uid in (alice.id, bob.id):
        assert r.zcard(keys.conversations(uid)) == 0
    assert r.scard(keys.conversations_unread(bob.id)) == 0
    html = page(logged_in_client("bob"), "/messages/")
    assert "Nothing here yet" in html and "data-messages-badge" not in html


def test_a_status_missing_from_a_followers_home_is_added(r, people):
    alice, bob = people
    status = services.status_create(author=alice, text="never delivered")
    # The job was lost (say, a store restored from before it was written).
    slot = keys.slot_of_user(alice.id)
    r.zrem(keys.job_queue(slot), services.fanout_job_id(alice.id, status.id))
    assert_repaired(r, "Statuses missing from homes: 1 in 1 homes")
    page = logged_in_client("bob").get("/").content.decode()
    assert "never delivered" in page


def test_someone_who_mutes_missing_from_the_fanouts_index_is_marked(r, people):
    # One server's push takes a clear bit in `muters` for "mutes no one": a lost
    # bit would let a muted followee's statuses into the home. A Cluster has no
    # such index, and nothing to report.
    alice, bob = people
    blocks.mute_create(user=bob, muted_id=alice.id)
    if is_cluster():
        output, failed = timelines("check")
        assert not failed and "index: 0" in output, output
        return
    r.setbit(keys.muters(), bob.id, 0)
    assert_repaired(
        r,
        "People with home skips (mutes, exclusive lists) missing from the "
        "fan-out's index: 1",
    )
    status = services.status_create(author=alice, text="muted")
    run_jobs()
    assert r.zscore(keys.home(bob.id), status.id) is None


def test_an_inactive_reader_or_a_queued_fanout_is_not_a_problem(r, people):
    alice, bob = people
    services.status_create(author=alice, text="queued, not yet run")
    output, failed = timelines("check")
    assert not failed, output  # its fan-out job is still queued
    run_jobs()
    r.delete(keys.home(bob.id))
    from accounts import keys as account_keys

    r.delete(account_keys.seen(bob.id))  # away: the fan-out skips bob on purpose
    output, failed = timelines("check")
    assert not failed, output


def test_failed_and_stuck_jobs_run_again(r, people, monkeypatch, settings):
    from timeline import fanout

    alice, bob = people
    status = services.status_create(author=alice, text="unlucky")
    monkeypatch.setitem(fanout.HANDLERS, "post", lambda job: 1 / 0)
    later = jobs.now_ms()
    for _ in range(settings.JOB_MAX_ATTEMPTS + 1):
        later += (settings.JOB_RETRY_MAX_SECONDS + 1) * 1000
        run_jobs(now=later, sweep=True)
    monkeypatch.undo()
    other = services.status_create(author=alice, text="stuck")
    output, failed = timelines("check", "--stuck-after", "0")
    assert failed and "Failed jobs: 1" in output and "Stuck jobs: 1" in output
    output, failed = timelines("repair", "--stuck-after", "0")
    assert not failed, output
    assert r.zscore(keys.home(bob.id), status.id) is not None
    assert r.zscore(keys.home(bob.id), other.id) is not None
    output, failed = timelines("check", "--stuck-after", "0")
    assert not failed, output


def test_a_reply_the_reply_rule_kept_out_of_a_home_is_not_missing(r, people):
    """A reply to a stranger stays out of the followers' homes by design
    (Mastodon's rule): check calls that healthy, and a repair leaves it out."""
    alice, bob = people
    stranger = make_user("stranger")
    parent = services.status_create(author=stranger, text="a question")
    social.status_reply(author=alice, sid=parent.id, text="an answer to a stranger")
    services.status_create(author=alice, text="a plain post")
    run_jobs()
    home = page(logged_in_client("bob"), "/")
    assert "a plain post" in home and "an answer to a stranger" not in home
    output, failed = timelines("check")
    assert not failed, output
    timelines("repair")
    assert "an answer to a stranger" not in page(logged_in_client("bob"), "/")


def test_a_missing_reply_is_repaired_under_the_reply_rule(r, people):
    """A lost reply to someone the reader follows is reported and added back; one
    whose reader stopped following the person it answers before the repair ran is
    left out, as the fan-out would."""
    alice, bob = people
    carol = make_user("carol")
    services.follow_create(follower=bob, followee_id=carol.id)
    parent = services.status_create(author=carol, text="a question")
    run_jobs()
    slot = keys.slot_of_user(alice.id)

    def lost_reply(text: str) -> int:
        reply = social.status_reply(author=alice, sid=parent.id, text=text)
        r.zrem(keys.job_queue(slot), services.fanout_job_id(alice.id, reply.id))
        return reply.id

    lost_reply("an answer")
    assert_repaired(r, "Statuses missing from homes: 1 in 1 homes")
    assert "an answer" in page(logged_in_client("bob"), "/")
    sid = lost_reply("a late answer")
    findings = repair.timelines_check()
    assert findings.missing == [(bob.id, alice.id, [sid])]
    services.follow_delete(follower=bob, followee_id=carol.id)
    repair.timelines_repair(findings)
    assert r.zscore(keys.home(bob.id), sid) is None


def test_a_delete_whose_removal_job_is_queued_is_not_a_problem(r, people):
    """While a deleted status's removal job waits for a worker, its entries in the
    followers' homes are work in progress, not references to report."""
    alice, bob = people
    status = services.status_create(author=alice, text="soon gone")
    run_jobs()
    services.status_delete(user=alice, sid=status.id)
    assert r.zscore(keys.home(bob.id), status.id) is not None  # the job's work
    output, failed = timelines("check")
    assert not failed, output
    run_jobs()
    assert r.zscore(keys.home(bob.id), status.id) is None


def test_a_returning_readers_rebuilt_home_is_not_a_problem(r, people, settings):
    """A reader back after a long time away gets each followee's newest
    FOLLOW_BACKFILL statuses, not all they missed: check calls that healthy."""
    settings.FOLLOW_BACKFILL = 3
    alice, bob = people
    make_away(r, bob.id)  # the fan-out skips bob
    for i in range(5):
        services.status_create(author=alice, text=f"while away {i}")
    run_jobs()
    page(logged_in_client("bob"), "/")  # back: the home is rebuilt
    run_jobs()
    assert r.zcard(keys.home(bob.id)) == 3
    output, failed = timelines("check")
    assert not failed, output


def test_an_author_moved_back_to_push_mode_leaves_no_problem(r, settings):
    """After an author was pulled and pushed again, the homes are healthy."""
    settings.FANOUT_PUSH_MAX = 5  # pulled past 5 followers, pushed again below 4
    settings.FOLLOW_BACKFILL = 3
    star = make_user("star")
    readers = [make_user(f"fan{i}") for i in range(6)]
    for reader in readers:
        services.follow_create(follower=reader, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) == "pull"
    for i in range(6):
        services.status_create(author=star, text=f"pulled {i}")
    run_jobs()
    for reader in readers[:3]:
        services.follow_delete(follower=reader, followee_id=star.id)
    run_jobs()
    assert r.get(keys.fanout_mode(star.id)) is None
    assert r.zcard(keys.home(readers[5].id)) == 6
    output, failed = timelines("check")
    assert not failed, output


@pytest.mark.real_redis
def test_repair_returns_while_the_site_keeps_posting(r):
    """On a live site (posts keep queuing jobs, no worker here), `timelines repair`
    queues the failed job again, runs it once and returns within seconds: it runs
    none of the site's own jobs and does not retry a job that fails again."""
    authors = [make_user(f"poster{i}") for i in range(5)]
    reader = make_user("reader")
    for author in authors:
        services.follow_create(follower=reader, followee_id=author.id)
    slot = keys.slot_of_user(1)
    r.zadd(keys.job_failed(slot), {"nosuchkind:1": jobs.now_ms()})
    stop, done = threading.Event(), threading.Event()

    def post() -> None:  # the site's traffic: a post every 20 ms
        i = 0
        while not stop.is_set():
            services.status_create(author=authors[i % len(authors)], text=f"p{i}")
            i += 1
            time.sleep(0.02)

    def repair_run() -> None:
        try:
            timelines("repair")
        finally:
            done.set()

    poster = threading.Thread(target=post, daemon=True)
    poster.start()
    threading.Thread(target=repair_run, daemon=True).start()
    try:
        assert done.wait(timeout=10), "repair still running after 10 s of traffic"
    finally:
        stop.set()
        poster.join()
    # Run once: it failed again and waits for its retry, in the workers' hands.
    assert r.hget(keys.job_data(slot), "nosuchkind:1#a") == "1"
    assert "no such job kind" in r.hget(keys.job_data(slot), "nosuchkind:1#e")


def test_a_drifted_count_of_the_site_is_counted_again(r, people):
    alice, bob = people
    services.status_create(author=alice, text="one")
    services.status_create(author=bob, text="two")
    stats = lambda: Client().get("/api/v1/instance").json()["stats"]  # noqa: E731
    # A slot's count off (a bug, a hand edit), and a worker's sum of it.
    slot = keys.slot_of_user(alice.id)
    r.hincrby(keys.counts(slot), "statuses", 5)
    counts.site_sum(claim=False)
    assert stats()["status_count"] == 7
    assert_repaired(r, "Site counts off: 1 slots")
    # The repair wrote the sum: right at once, not at the workers' next turn.
    assert stats() == {"user_count": 2, "status_count": 2, "domain_count": 0}


def test_exclusive_lists_are_no_problem(r, people):
    """A member's statuses kept out of the owner's home are not "missing", and the
    derived set and index a list's writes keep are in line."""
    alice, bob = people
    carol = make_user("carol")
    services.follow_create(follower=bob, followee_id=carol.id)
    lid = lists.list_create(uid=bob.id, title="News", exclusive=True).id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    services.status_create(author=alice, text="kept out")
    services.status_create(author=carol, text="in")
    run_jobs()
    output, failed = timelines("check")
    assert not failed and "No problems found." in output, output


def test_a_derived_exclusive_set_out_of_line_is_rebuilt(r, people):
    """A store from before `list_exclusive` (or a hand edit): the lists are the
    truth; repair writes the set, its index bit, and sweeps the home."""
    alice, bob = people
    lid = lists.list_create(uid=bob.id, title="News").id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    status = services.status_create(author=alice, text="to go")
    run_jobs()
    assert r.zscore(keys.home(bob.id), status.id) is not None
    # The flag as a release before the set wrote it: the lists hash alone.
    r.hset(keys.lists(bob.id), lid, '{"title":"News","exclusive":true}')
    assert_repaired(r, "Exclusive lists out of line with list_exclusive: 1")
    assert r.zscore(keys.home(bob.id), status.id) is None
    later = services.status_create(author=alice, text="kept out")
    run_jobs()
    assert r.zscore(keys.home(bob.id), later.id) is None


def test_someone_with_an_exclusive_list_missing_from_the_fanouts_index(r, people):
    alice, bob = people
    lid = lists.list_create(uid=bob.id, title="News", exclusive=True).id
    lists.members_add(uid=bob.id, lid=lid, member_ids=[alice.id])
    if is_cluster():
        return
    r.setbit(keys.muters(), bob.id, 0)
    assert_repaired(
        r,
        "People with home skips (mutes, exclusive lists) missing from the "
        "fan-out's index: 1",
    )
    status = services.status_create(author=alice, text="listed")
    run_jobs()
    assert r.zscore(keys.home(bob.id), status.id) is None
