"""`manage.py timelines check|repair`: find and fix inconsistent timelines."""

from __future__ import annotations

from django.core.management.base import CommandError

from config.management.commands._store import StoreCommand
from timeline.repair import Findings, timelines_check, timelines_repair


class Command(StoreCommand):
    help = (
        "check: report one-sided follows, references to deleted statuses, statuses "
        "missing from homes, stuck jobs, one-sided blocks and follows across "
        "blocks (exit status 1 if any). repair: fix "
        "them, then check again; --dry-run only reports what it would fix. "
        "Failed and stuck jobs, and unfinished account deletions, are queued again "
        "and the workers woken; repair runs each of those jobs once itself and "
        "returns (it runs none of the jobs queued after them). One that fails again, "
        "waits for other work or queues more is left to the fan-out workers: "
        "without a running worker it waits for one (or for the next repair)."
    )

    def add_arguments(self, parser):
        parser.add_argument("action", choices=["check", "repair"])
        parser.add_argument(
            "--dry-run", action="store_true", help="repair: report, write nothing"
        )
        parser.add_argument(
            "--stuck-after",
            type=float,
            default=600,
            help="seconds after which a queued job counts as stuck",
        )

    def handle(self, *args, action, dry_run=False, stuck_after=600, **options):
        verbosity = options.get("verbosity", 1)

        def progress(findings: Findings) -> None:
            if verbosity >= 2:
                self.stderr.write(
                    f"  {findings.keys_scanned:,} keys scanned, "
                    f"{findings.problems():,} problems so far"
                )

        findings = timelines_check(stuck_after_s=stuck_after, progress=progress)
        problems = findings.problems()
        if verbosity >= 1:
            self.stdout.write(f"Scanned {findings.keys_scanned:,} keys.")
            for line in findings.lines():
                self.stdout.write(line)
        if action == "check" or not problems:
            if not problems:
                self.stdout.write("No problems found.")
                return
            raise CommandError(
                f"{problems:,} problems found; `timelines repair` fixes them."
            )
        if dry_run:
            self.stdout.write(
                f"Dry run: would fix {problems:,} problems; nothing written."
            )
            return
        timelines_repair(findings)
        left = timelines_check(stuck_after_s=stuck_after).problems()
        self.stdout.write(f"Repaired {problems:,} problems; {left:,} left.")
        if left:
            raise CommandError(f"{left:,} problems are left after the repair.")
