"""The Jinja2 environment every page is rendered with (Django's Jinja2 backend).

Why Jinja2: Django's template language spent about 40% of a timeline page's time on
the base layout and forms; Jinja2 compiles templates to Python (docs/BENCHMARKS.md).

Globals every template has: `url(name, *args)` (a named route, reversed once per
process), `plural(n, suffix)`, `status_max_length` (a constant), and each entry
of `settings.JINJA2_GLOBALS` (apps name their own template functions there, so this
module imports no app). Context processors add `viewer`, `messages`, `assets`,
`csrf_token` and `csrf_input`.
"""

from __future__ import annotations

from django.conf import settings
from django.utils.module_loading import import_string
from jinja2 import Environment

from config.reverse import url_for


def plural(count: int, suffix: str = "s") -> str:
    """The plural suffix for a count: `status{{ plural(n, "es") }}`."""
    return "" if count == 1 else suffix


def environment(**options) -> Environment:
    env = Environment(**options)
    env.globals.update(
        url=url_for,
        plural=plural,
        status_max_length=settings.STATUS_MAX_LENGTH,
    )
    for name, path in settings.JINJA2_GLOBALS.items():
        env.globals[name] = import_string(path)
    return env
