from django.apps import AppConfig

DUMMY_ENGINE = "django.db.backends.dummy"


def has_database(databases: dict) -> bool:
    """Whether any configured database is a real one. Django fills an empty
    DATABASES in place with a dummy "default" once anything reads it, so an empty
    dict and a dummy engine both mean none."""
    return any(
        db.get("ENGINE", DUMMY_ENGINE) != DUMMY_ENGINE for db in databases.values()
    )


class ConfigConfig(AppConfig):
    """The project package, installed for its management commands and for what
    the project's settings mean to Django itself (`ready`)."""

    name = "config"

    def ready(self) -> None:
        from django.conf import settings
        from django.core import signals
        from django.db import close_old_connections, reset_queries

        # No database (`DATABASES = {}`): Django's per-request bookkeeping of
        # database connections has nothing to reset or close, and sending its two
        # handlers cost some 33 us of every request's CPU (docs/BENCHMARKS.md).
        if not has_database(settings.DATABASES):
            signals.request_started.disconnect(reset_queries)
            signals.request_started.disconnect(close_old_connections)
            signals.request_finished.disconnect(close_old_connections)
