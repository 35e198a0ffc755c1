"""`manage.py fanout_worker`: run the jobs that posts, deletes and follows record."""

from __future__ import annotations

import signal
import threading

from django.core.management.base import BaseCommand, CommandError

from config.redis import StoreRefused, get_redis
from timeline import fanout, jobs


class Command(BaseCommand):
    help = (
        "Run a fan-out worker until SIGTERM or Ctrl-C (several may run at once). "
        "--stats prints the queues' state and exits."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--stats",
            action="store_true",
            help="print queue depth, jobs held, the oldest job's age and failures",
        )

    def handle(self, *args, stats=False, **options):
        if stats:
            s = jobs.stats()
            age = f"{s.oldest_age_s:.1f} s" if s.oldest_age_s is not None else "-"
            self.stdout.write(
                f"queued {s.depth} (held by workers {s.leased}), oldest {age}, "
                f"failed {s.failed}"
            )
            for jid in s.failed_ids:
                self.stdout.write(f"  failed: {jid}")
            return
        try:
            get_redis()  # the store's layout is checked on first connection
        except StoreRefused as error:
            raise CommandError(str(error)) from error
        stop = threading.Event()
        for sig in (signal.SIGTERM, signal.SIGINT):
            signal.signal(sig, lambda *_: stop.set())
        worker = fanout.Worker(stop=stop)
        self.stdout.write("fan-out worker running (Ctrl-C or SIGTERM stops it)")
        worker.run()
        self.stdout.write(f"fan-out worker stopped after {worker.finished} jobs")
