"""Small HTTP helpers shared by the apps' views."""

from __future__ import annotations

from django.http import Http404
from django.utils.http import url_has_allowed_host_and_scheme

from config.reverse import url_for


def safe_next(request, default: str | None = None) -> str:
    """The `next` URL from the form or query, if it stays on this site; else `default`
    (the home page when none is given)."""
    default = default or url_for("timeline:home")
    target = request.POST.get("next") or request.GET.get("next") or default
    safe = url_has_allowed_host_and_scheme(
        target, allowed_hosts={request.get_host()}, require_https=request.is_secure()
    )
    return target if safe else default


def int_param(request, name: str, *, maximum: int = 2**53) -> int | None:
    """A positive integer query parameter; absent is None, anything else is a 404."""
    raw = request.GET.get(name)
    if raw is None or raw == "":
        return None
    if not raw.isascii() or not raw.isdigit() or len(raw) > 16 or int(raw) > maximum:
        raise Http404(f"Bad {name}")
    return int(raw)
