from django.apps import AppConfig


class ConfigConfig(AppConfig):
    """The project package, installed only for its management commands."""

    name = "config"
