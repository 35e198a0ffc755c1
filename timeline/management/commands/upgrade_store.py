from __future__ import annotations

from django.core.management.base import CommandError

from config.management.commands._store import StoreCommand
from config.redis import skip_first_connect_checks
from timeline.upgrades import BATCH, LAYOUT, UpgradeReport, store_upgrade

PROGRESS_EVERY = 10_000  # followers zsets between two progress lines at verbosity 1


class Command(StoreCommand):
    help = (
        f"Upgrade a store written by an older version to key layout {LAYOUT}: name "
        "every follower in follower_names, partition the global timeline, stamp "
        "every user as seen, index the people who mute someone, count the users "
        "and statuses (the instance's stats), name every reply's and repost's "
        "conversation (and move the mutes recorded by another of its statuses "
        "to its first), delete the legacy "
        "keys (store:epoch, statuses:next_id, timeline:global) and record the "
        "layout in store:layout. "
        "Each step runs only on a store of an older layout, so a run on an "
        "upgraded store changes nothing (on one server, the index of muters is "
        "checked on every run: a store copied from a cluster lacks it). "
        "Stop the old version first (it would write the legacy keys again); the "
        "new one may serve meanwhile. Run it again if interrupted."
    )

    def add_arguments(self, parser):
        parser.add_argument(
            "--dry-run",
            action="store_true",
            help="report what the upgrade would do; write nothing",
        )
        parser.add_argument(
            "--batch",
            type=int,
            default=BATCH,
            help=f"followers zsets per batch of round trips (default: {BATCH})",
        )

    def handle(self, *args, **opts):
        if opts["batch"] < 1:
            raise CommandError("--batch must be at least 1.")
        skip_first_connect_checks()  # this command is what the layout check asks for
        verbosity = opts["verbosity"]
        dry_run = opts["dry_run"]
        if verbosity >= 1:
            doing = "Dry run (nothing is written): checking" if dry_run else "Upgrading"
            self.stdout.write(f"{doing} the store for key layout {LAYOUT}.")
        shown = 0

        def progress(report: UpgradeReport) -> None:
            nonlocal shown
            every = 1 if verbosity >= 2 else PROGRESS_EVERY
            if verbosity >= 1 and report.followers_sets - shown >= every:
                shown = report.followers_sets
                self.stdout.write(
                    f"  {report.followers_sets:,} followers sets, "
                    f"{report.follows:,} follows checked; "
                    f"{report.names_added:,} names "
                    f"{'to write' if dry_run else 'written'}"
                )

        report = store_upgrade(dry_run=dry_run, batch=opts["batch"], progress=progress)
        if verbosity >= 1:
            self.stdout.write(self._summary(report))

    def _conversations(self, report: UpgradeReport, would: str) -> list[str]:
        named = report.conversations_named
        gave = "give" if would else "gave"
        lines = [
            f"Conversations: {would}{gave} {named:,} replies and reposts the "
            "conversation they are part of (the first status of their thread)"
            + (
                f", {report.outbox_entries_named:,} of them in their author's outbox."
                if report.outbox_entries_named
                else "."
            )
            if named
            else "Conversations: every reply and repost names its own."
        ]
        moved = report.conversation_mutes_moved
        move = "move" if would else "moved"
        lines.append(
            f"Muted conversations: {would}{move} {moved:,} muted "
            + (
                "conversation to its first status."
                if moved == 1
                else "conversations to their first status."
            )
            if moved
            else "Muted conversations: each is named by its first status."
        )
        return lines

    def _summary(self, report: UpgradeReport) -> str:
        would = "would " if report.dry_run else ""
        before = (
            f"layout {report.layout_before}"
            if report.layout_before is not None
            else "no layout recorded (layout 1)"
        )
        lines = [
            f"Checked {report.followers_sets:,} followers sets "
            f"({report.follows:,} follows); the store had {before}.",
            f"Follower names: {would}{'write' if would else 'wrote'} "
            f"{report.names_added:,}.",
        ]
        if report.unnamed:
            lines.append(
                f"{report.unnamed:,} follows left unnamed: the follower's user hash "
                "is gone."
            )
        moved = "move" if would else "moved"
        lines.append(
            f"Global timeline: {would}{moved} {report.global_entries_moved:,} "
            "entries into its partitions."
            if report.global_entries_moved
            else "Global timeline: already partitioned."
        )
        stamped = "stamp" if would else "stamped"
        lines.append(
            f"Last-seen stamps: {would}{stamped} {report.readers_stamped:,} users as "
            "seen today."
            if report.readers_stamped
            else "Last-seen stamps: every user has one."
        )
        indexed = "add" if would else "added"
        lines.append(
            f"People search: {would}{indexed} {report.names_indexed:,} names to "
            "the index."
            if report.names_indexed
            else "People search: every name is indexed."
        )
        marked = "mark" if would else "marked"
        lines.append(
            f"Fan-out's index of muters: {would}{marked} {report.muters_marked:,} "
            "users who mute someone."
            if report.muters_marked
            else "Fan-out's index of muters: complete."
        )
        if report.counted is not None:
            count = "count" if would else "counted"
            lines.append(
                f"Site counts: {would}{count} {report.counted.users:,} users and "
                f"{report.counted.statuses:,} statuses."
            )
        else:
            lines.append("Site counts: kept as the site counts them.")
        if report.layout_before is None or report.layout_before < 8:
            lines.extend(self._conversations(report, would))
        if report.layout_before is None or report.layout_before < 9:
            built = "build" if would else "built"
            lines.append(
                f"Exclusive lists: {would}{built} the set of "
                f"{report.exclusive_synced:,} users with lists."
            )
        deleted = "delete" if would else "deleted"
        lines.append(
            f"Legacy keys: {would}{deleted} {report.legacy_keys_deleted}."
            if report.legacy_keys_deleted
            else "Legacy keys: none."
        )
        if report.layout_before is not None and report.layout_before > 1:
            through = min(report.layout_before, LAYOUT)
            lines.append(
                f"The store had layout {report.layout_before}: the steps of layouts "
                f"up to {through} were skipped (but one server's index of muters, "
                "checked on every run)."
            )
        if report.layout_recorded:
            recorded = "record" if would else "recorded"
            lines.append(f"Layout: {would}{recorded} {LAYOUT}.")
        else:
            lines.append(f"Layout: already {report.layout_before}; unchanged.")
        if report.dry_run:
            lines.append("Dry run: nothing was written.")
        return "\n".join(lines)
