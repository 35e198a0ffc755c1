"""`manage.py reports [--settled] | show <id> | resolve <id> [--note TEXT]`: read
and settle the reports people file (`timeline.reports`).

Every report key is in one slot (`{reports}`), so these are plain commands on one
node, on a Cluster too.
"""

from __future__ import annotations

from datetime import UTC, datetime

from django.core.management.base import CommandError

from accounts.selectors import user_get
from config.management.commands._store import StoreCommand
from timeline import reports, services
from timeline.domain import NotFound


def _when(moment: float) -> str:
    return datetime.fromtimestamp(moment, tz=UTC).strftime("%Y-%m-%d %H:%M UTC")


def _person(name: str, uid: int, standing: reports.Standing) -> str:
    gone = "" if uid in standing.users else ", deleted since"
    return f"@{name} (id {uid}{gone})"


def report_lines(report: reports.Report, standing: reports.Standing) -> list[str]:
    """What an operator reads of one report."""
    lines = [
        f"#{report.id}  {_when(report.created)}  {report.category}",
        f"  by {_person(report.reporter, report.reporter_id, standing)}",
        f"  about {_person(report.target, report.target_id, standing)}",
        f"  comment: {report.comment}" if report.comment else "  no comment",
    ]
    for status in report.statuses:
        state = "still up" if status.id in standing.statuses else "deleted since"
        lines.append(f"  status {status.id} ({_when(status.created)}, {state}):")
        if status.spoiler:
            lines.append(f"    [warning: {status.spoiler}]")
        lines.extend(f"    {line}" for line in status.text.splitlines() or [""])
    if report.settled is not None:
        note = f": {report.note}" if report.note else ""
        lines.append(f"  settled {_when(report.settled)}{note}")
    return lines


class Command(StoreCommand):
    help = (
        "List the open reports, oldest first (--settled: the settled ones, newest "
        "first); `show <id>` one; `resolve <id> [--note TEXT]` settles one "
        "(--delete-statuses also deletes the statuses it flags that still stand)."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "action", nargs="?", default="list", choices=["list", "show", "resolve"]
        )
        parser.add_argument("id", nargs="?", type=int)
        parser.add_argument("--settled", action="store_true")
        parser.add_argument("--limit", type=int, default=100)
        parser.add_argument("--note", default="")
        parser.add_argument("--delete-statuses", action="store_true")

    def handle(self, *args, action, id=None, **options):
        if action == "list":
            self._list(settled=options["settled"], limit=options["limit"])
            return
        if id is None:
            raise CommandError(f"`reports {action}` needs a report id.")
        found = reports.report_get(rid=id)
        if found is None:
            raise CommandError(f"No report #{id}.")
        if action == "show":
            self._write(found)
            return
        if options["delete_statuses"]:
            self._delete_statuses(found)
        outcome = reports.report_settle(rid=id, note=options["note"])
        if outcome == reports.ALREADY:
            self.stdout.write(f"Report #{id} is already settled.")
        elif outcome == reports.UNKNOWN:
            raise CommandError(f"No report #{id}.")
        else:
            self.stdout.write(f"Report #{id} settled.")

    def _write(self, *found: reports.Report) -> None:
        standing = reports.standing_get(list(found))
        for report in found:
            for line in report_lines(report, standing):
                self.stdout.write(line)

    def _list(self, *, settled: bool, limit: int) -> None:
        if limit < 1:
            raise CommandError("--limit must be 1 or more.")
        found = reports.reports_list(settled=settled, limit=limit)
        if not found:
            self.stdout.write("No settled reports." if settled else "No open reports.")
            return
        self._write(*found)
        more = reports.reports_count(settled=settled) - len(found)
        if more > 0:
            kind = "settled" if settled else "open"
            plural, them = ("", "it") if more == 1 else ("s", "them")
            self.stdout.write(
                f"{more:,} more {kind} report{plural} (raise --limit to see {them})."
            )

    def _delete_statuses(self, report: reports.Report) -> None:
        """Delete the flagged statuses that still stand, as their author would."""
        author = user_get(uid=report.target_id)
        standing = reports.standing_get([report])
        for sid in report.status_ids:
            if author is None or sid not in standing.statuses:
                continue
            try:
                services.status_delete(user=author, sid=sid)
            except NotFound:
                continue
            self.stdout.write(f"Deleted status {sid}.")
