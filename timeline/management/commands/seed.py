from __future__ import annotations

import argparse
import sys

from django.core.management.base import CommandError, DjangoHelpFormatter

from config.management.commands._store import StoreCommand
from config.redis import get_redis, skip_first_connect_checks
from timeline.seeding import Progress, seed
from timeline.upgrades import data_keys, layout_stamp

DEMO_PASSWORD = "retwis-demo-password"


class HelpFormatter(DjangoHelpFormatter, argparse.ArgumentDefaultsHelpFormatter):
    """Django's option order, and every option's default after its help."""


class Command(StoreCommand):
    help = (
        "Fill Redis with realistic users, a power-law follow graph and statuses. "
        f"Every seeded user (user<id>) logs in with the password {DEMO_PASSWORD!r}."
    )

    def create_parser(self, prog_name, subcommand, **kwargs):
        kwargs.setdefault("formatter_class", HelpFormatter)
        return super().create_parser(prog_name, subcommand, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument(
            "--users", type=int, default=1000, help="how many users to create"
        )
        parser.add_argument(
            "--follows-per-user",
            type=int,
            default=20,
            help=(
                "average people each user follows (exponentially distributed; "
                "at least one each, or 0 for no follows)"
            ),
        )
        parser.add_argument(
            "--statuses-per-user",
            type=int,
            default=10,
            help="statuses per user on average (authors picked at random)",
        )
        parser.add_argument(
            "--seed",
            type=int,
            default=42,
            help="random seed: the same seed, the same data",
        )
        parser.add_argument(
            "--password",
            default=DEMO_PASSWORD,
            help="the password every seeded user logs in with",
        )
        parser.add_argument(
            "--days",
            type=int,
            default=28,
            help="how many days of history the statuses and follows spread over",
        )
        parser.add_argument(
            "--append",
            action="store_true",
            help="add to a store that already holds data",
        )
        parser.add_argument(
            "--flush",
            action="store_true",
            help=(
                "delete EVERYTHING in the Redis database first (asks unless --yes), "
                "whatever version of the site wrote it"
            ),
        )
        parser.add_argument(
            "--yes", action="store_true", help="do not ask before --flush"
        )
        parser.add_argument(
            "--quiet",
            action="store_true",
            help="print nothing but errors: the same as --verbosity 0",
        )

    def handle(self, *args, **opts):
        # Every value checked before the first write: a refusal leaves the store as
        # it was (a half-seeded one would make the next plain `seed` refuse it).
        for option, least in (
            ("users", 2),
            ("follows_per_user", 0),
            ("statuses_per_user", 0),
            ("days", 1),
        ):
            if opts[option] < least:
                name = "--" + option.replace("_", "-")
                raise CommandError(f"{name} must be at least {least}.")
        if not opts["password"]:
            raise CommandError(
                "--password must not be empty: the login form needs one."
            )
        verbosity = 0 if opts["quiet"] else opts["verbosity"]
        if opts["flush"]:
            # The flush replaces whatever is there, a store of another key layout
            # too (the layout check would refuse it); the layout is stamped after.
            skip_first_connect_checks()
        r = get_redis()
        if opts["flush"]:
            if not opts["yes"] and not self._confirm(r):
                raise CommandError("Not flushed; nothing written.")
            r.flushdb()
            layout_stamp(r)
        elif data_keys(r) and not opts["append"]:
            raise CommandError(
                f"The store already holds {data_keys(r)} keys. Use --append to add "
                "to it, or --flush to replace it (asks first)."
            )
        report = seed(
            users=opts["users"],
            follows_per_user=opts["follows_per_user"],
            statuses_per_user=opts["statuses_per_user"],
            password=opts["password"],
            random_seed=opts["seed"],
            days=opts["days"],
            progress=Progress(self.stdout if verbosity >= 1 else None),
        )
        if verbosity >= 1:
            self.stdout.write(
                f"Seeded {report.users} users, {report.follows} follows, "
                f"{report.statuses} statuses ({report.polls} with a poll) and "
                f"{report.home_entries} home timeline "
                f"entries in {report.seconds:.1f}s: {report.commands} Redis commands, "
                f"{report.commands_per_second:,.0f} commands/s.\n"
                f"Log in as any user<id> (e.g. user{1 if not opts['append'] else 'N'}) "
                f"with the password {opts['password']!r}."
            )

    def _confirm(self, r) -> bool:
        if not sys.stdin.isatty():
            raise CommandError("--flush needs --yes when there is no terminal to ask.")
        answer = input(
            f"Delete all {data_keys(r)} keys in this Redis store? Type 'yes': "
        )
        return answer.strip().lower() == "yes"
