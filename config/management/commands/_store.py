"""The base of the management commands that use the store (not a command itself:
Django skips modules whose name starts with an underscore)."""

from __future__ import annotations

from django.core.management.base import BaseCommand, CommandError

from config.redis import StoreRefused


class StoreCommand(BaseCommand):
    """A command that reads or writes the store.

    A store the first-connect checks refuse (`config.redis.on_first_connect`: say, a
    key layout an upgrade must bring forward) stops it with the check's message, as a
    CommandError: exit status 1 and no traceback, whichever line first connected.
    """

    def execute(self, *args, **options):
        try:
            return super().execute(*args, **options)
        except StoreRefused as error:
            raise CommandError(str(error)) from error
