"""The base of the management commands that use the store (not a command itself:
Django skips modules whose name starts with an underscore)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import redis
from django.conf import settings
from django.core.management.base import BaseCommand, CommandError

from config.redis import StoreRefused

SCHEMES = ("redis", "rediss", "unix")


def _shown(url: str) -> str:
    """The address as an operator may see it printed: its password hidden, before
    the host or in the query (`?password=`, which redis-py takes too)."""
    parts = urlsplit(url)
    if parts.password is not None:
        host = parts.netloc.rpartition("@")[2]
        parts = parts._replace(netloc=f"{parts.username or ''}:***@{host}")
    if parts.query:
        query = [
            (name, "***" if name.lower() == "password" else value)
            for name, value in parse_qsl(parts.query, keep_blank_values=True)
        ]
        parts = parts._replace(query=urlencode(query, safe="*"))
    return urlunsplit(parts)


class StoreCommand(BaseCommand):
    """A command that reads or writes the store.

    A store the first-connect checks refuse (`config.redis.on_first_connect`: say, a
    key layout an upgrade must bring forward) stops it with the check's message, as a
    CommandError: exit status 1 and no traceback, whichever line first connected.
    So does a Redis it cannot reach (down, a wrong host, port or database) and a
    REDIS_URL that is no Redis address: one line naming the address (its password
    hidden) and REDIS_URL, where the Redis library's traceback took sixty.
    """

    def execute(self, *args, **options):
        url = settings.REDIS_URL
        if url and urlsplit(url).scheme not in SCHEMES:
            raise CommandError(
                f"REDIS_URL must be a redis://, rediss:// or unix:// address, not "
                f"{_shown(url)!r}."
            )
        try:
            return super().execute(*args, **options)
        except StoreRefused as error:
            raise CommandError(str(error)) from error
        except (
            redis.ConnectionError,
            redis.TimeoutError,
            redis.exceptions.RedisClusterException,
            redis.exceptions.ClusterDownError,
        ) as error:
            where = _shown(url) if url else "the embedded Redis"
            raise CommandError(
                f"Cannot reach Redis at {where}: {error} (check REDIS_URL, and that "
                "the server runs)."
            ) from error
        except redis.ResponseError as error:
            if "DB index" not in str(error):
                raise
            raise CommandError(
                f"Redis at {_shown(url)} refused the database: {error} (check the "
                "number at the end of REDIS_URL)."
            ) from error
