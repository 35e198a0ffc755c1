"""`manage.py fanout_worker --stats`: what an operator reads about the queues. A job
counts as held by workers only while a worker holds its lease; one waiting for a
later time (a retry's backoff, a private account's sweep after the grace) is
"scheduled later", held by no one."""

from __future__ import annotations

import io

from django.core.management import call_command

from tests.helpers import make_user, run_jobs
from timeline import jobs, keys, privacy


def worker_stats() -> str:
    out = io.StringIO()
    call_command("fanout_worker", "--stats", stdout=out)
    return out.getvalue()


def test_stats_do_not_count_a_job_waiting_for_its_retry_as_held(r):
    jobs.enqueue(slot=keys.slot_of_user(1), jid="nosuchkind:1")
    run_jobs()  # it raised: due again after a backoff; no worker holds it
    assert worker_stats().startswith(
        "queued 1 (held by workers 0, scheduled later 1), oldest "
    )


def test_stats_do_not_count_a_private_accounts_sweep_as_held(r):
    alice = make_user("alice")
    privacy.account_privacy_set(user=alice, private=True)
    # Its job sweeps at once, then waits to sweep again after the grace.
    run_jobs()
    assert worker_stats().startswith(
        "queued 1 (held by workers 0, scheduled later 1), oldest "
    )


def test_stats_count_a_leased_job_as_held(r):
    slot = keys.slot_of_user(1)
    jobs.enqueue(slot=slot, jid="nosuchkind:1")
    assert [job.id for job in jobs.claim(slot=slot, limit=1)] == ["nosuchkind:1"]
    assert worker_stats().startswith("queued 1 (held by workers 1), oldest ")
    stats = jobs.stats()
    assert (stats.depth, stats.leased, stats.scheduled) == (1, 1, 0)
