"""`manage.py fanout_worker`: run the jobs that posts, deletes and follows record."""

from __future__ import annotations

import signal
import threading

from config.management.commands._store import StoreCommand
from config.redis import get_redis
from timeline import fanout, jobs


class Command(StoreCommand):
    help = (
        "Run a fan-out worker until SIGTERM or Ctrl-C (several may run at once). "
        "--stats prints the queues' state and exits."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--stats",
            action="store_true",
            help=(
                "print queue depth, jobs held by workers, jobs scheduled later "
                "(a retry's backoff, a wait), the oldest job's age and failures"
            ),
        )

    def handle(self, *args, stats=False, **options):
        if stats:
            s = jobs.stats()
            age = f"{s.oldest_age_s:.1f} s" if s.oldest_age_s is not None else "-"
            later = f", scheduled later {s.scheduled}" if s.scheduled else ""
            self.stdout.write(
                f"queued {s.depth} (held by workers {s.leased}{later}), "
                f"oldest {age}, failed {s.failed}"
            )
            for jid in s.failed_ids:
                self.stdout.write(f"  failed: {jid}")
            return
        get_redis()  # the store's layout is checked before the worker starts
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        worker = fanout.Worker(stop=stop)
        self.stdout.write("fan-out worker running (Ctrl-C or SIGTERM stops it)")
        worker.run()
        self.stdout.write(f"fan-out worker stopped after {worker.finished} jobs")
