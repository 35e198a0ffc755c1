"""`url_for(name, *args)`: Django's `reverse()`, remembered per process.

Pages link the same few routes many times (a profile per status author, a permalink
per status, the navigation on every page). `reverse()` matches patterns and quotes
arguments on every call; the URLconf cannot change under a running process, so each
(route, arguments) pair is reversed once and kept, in a bounded, thread-safe cache.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from django.urls import get_script_prefix, reverse


def url_for(name: str, *args: str | int) -> str:
    """The path of the named route `name` ("app:route") with these arguments."""
    return _reversed(get_script_prefix(), name, args)


def url_maker() -> Callable[..., str]:
    """`url_for` for the many links of one response: the script prefix (a
    thread-local, most of `url_for`'s own cost) is read once, here. The same
    function for the same prefix, so that callers may memoize on it."""
    return _maker(get_script_prefix())


@lru_cache(maxsize=16)
def _maker(prefix: str) -> Callable[..., str]:
    return lambda name, *args: _reversed(prefix, name, args)


@lru_cache(maxsize=65536)
def _reversed(prefix: str, name: str, args: tuple) -> str:
    # The script prefix (a deployment under a sub-path) is part of the key.
    return reverse(name, args=args)
