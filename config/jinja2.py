"""The Jinja2 environment every page is rendered with (Django's Jinja2 backend).

Why Jinja2: Django's template language spent about 40% of a timeline page's time on
the base layout and forms; Jinja2 compiles templates to Python (docs/BENCHMARKS.md).

Globals every template has: `url(name, *args)` (a named route, reversed once per
process), `plural(n, suffix)`, `status_max_length` (a constant), `fragment(name,
**values)` (a template memoized on what it shows, below), and each entry of
`settings.JINJA2_GLOBALS` (apps name their own template functions there, so this
module imports no app). Context processors add `viewer`, `messages`, `assets`,
`csrf_token` and `csrf_input`.
"""

from __future__ import annotations

import secrets
from functools import lru_cache

from django.conf import settings
from django.utils.module_loading import import_string
from jinja2 import Environment, Template, pass_context
from jinja2.runtime import Context
from jinja2.utils import missing
from markupsafe import Markup

from config.reverse import url_for, url_maker

# Where a fragment's CSRF field goes, split out of its memoized markup. Random per
# process, so that no value a fragment shows (a path a visitor typed) can forge it.
_CSRF_HOLE = f"\x00csrf-{secrets.token_hex(16)}\x00"


def plural(count: int, suffix: str = "s") -> str:
    """The plural suffix for a count: `status{{ plural(n, "es") }}`."""
    return "" if count == 1 else suffix


@lru_cache(maxsize=4096)
def _fragment_parts(
    template: Template, url, values: tuple[tuple[str, type, object], ...]
) -> tuple[str, ...]:
    context = {name: value for name, _, value in values}
    html = template.render(context, url=url, csrf_input=Markup(_CSRF_HOLE))
    return tuple(html.split(_CSRF_HOLE))


@pass_context
def fragment(context: Context, name: str, **values) -> Markup:
    """Template `name` rendered with `values` alone, memoized per process.

    For the markup every page repeats (the navigation, a compose box): a fragment
    sees only the values given, the response's `url` and the globals, never the
    page's context, so its markup is a function of (template, script prefix,
    values) and cannot go stale; the key is exactly that, with the template object
    (a new one when a template is reloaded in development). Values must be
    hashable, and few per page: each combination is an entry (4,096 at most, the
    least recently used dropped; `lru_cache` is safe under threads). The response's
    CSRF field is never memoized: it is put in each time, where the fragment shows
    `csrf_input`.
    """
    template = context.environment.get_template(name)
    # A value's type is part of its key: "<b>" and Markup("<b>") are equal strings
    # that render differently (escaped, and not).
    key = tuple((k, type(value), value) for k, value in values.items())
    url = context.resolve_or_missing("url")
    if url is missing or url is url_for:
        # Rendered without a request: the global reads the prefix on each call.
        url = url_maker()
    parts = _fragment_parts(template, url, key)
    if len(parts) == 1:
        return Markup(parts[0])
    # As `{{ csrf_input }}` renders without a request (an error page): nothing.
    field = context.resolve_or_missing("csrf_input")
    return Markup(("" if field is missing else str(field)).join(parts))


def environment(**options) -> Environment:
    env = Environment(**options)
    env.globals.update(
        url=url_for,
        plural=plural,
        fragment=fragment,
        status_max_length=settings.STATUS_MAX_LENGTH,
    )
    for name, path in settings.JINJA2_GLOBALS.items():
        env.globals[name] = import_string(path)
    return env
