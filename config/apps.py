from django.apps import AppConfig


class ConfigConfig(AppConfig):
    """The project package, installed for its management commands and for what
    the project's settings mean to Django itself (`ready`)."""

    name = "config"

    def ready(self) -> None:
        from django.conf import settings
        from django.core import signals
        from django.db import close_old_connections, reset_queries

        # No database (`DATABASES = {}`): Django's per-request bookkeeping of
        # database connections has nothing to reset or close, and its two signal
        # handlers cost some 45 us of every request's CPU (docs/BENCHMARKS.md).
        if not settings.DATABASES:
            signals.request_started.disconnect(reset_queries)
            signals.request_started.disconnect(close_old_connections)
            signals.request_finished.disconnect(close_old_connections)
