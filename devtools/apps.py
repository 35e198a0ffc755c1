from django.apps import AppConfig


class DevtoolsConfig(AppConfig):
    """Development tooling: runserver with the embedded Redis, the in-process live
    server of the browser tests, and `manage.py screenshots`. No models, no URLs."""

    name = "devtools"
