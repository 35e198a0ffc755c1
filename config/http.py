"""Small HTTP helpers shared by the apps' views."""

from __future__ import annotations

import ipaddress
import logging
import re

from django.conf import settings
from django.http import Http404
from django.utils.http import url_has_allowed_host_and_scheme

from config.reverse import url_for

logger = logging.getLogger(__name__)
# An address with its port, as some proxies write it: `1.2.3.4:80`, `[2001:db8::1]:80`.
_WITH_PORT = re.compile(r"^\[(?P<v6>[^\]]+)\](?::\d+)?$|^(?P<v4>[\d.]+):\d+$")
_unknown_said = False
# A host as a request, a handle or a link names it: a name (or a bracketed IPv6
# address) and maybe a port.
_HOST_PORT = re.compile(r"^(?P<name>\[[^\]]*\]|[^:\[\]]*)(?::(?P<port>\d*))?$")
DEFAULT_PORTS = ("80", "443")


def same_host(named: str, ours: str) -> bool:
    """Whether a host as a handle, an `acct` or a link names it (`named`: `host`,
    `host:port`, `[v6]:port`) is this site, as the request names it (`ours`: its
    `Host`): the same name, any case, and the same port, or none, or a scheme's
    default one (80, 443). The one rule for `@alice@host` in a text
    (`richtext.local_handles`), an API's `acct`, and a link to one of our pages."""
    a, b = _HOST_PORT.match(named.lower()), _HOST_PORT.match(ours.lower())
    if not a or not b or not a["name"] or a["name"] != b["name"]:
        return False
    port = a["port"]
    return not port or port == b["port"] or port in DEFAULT_PORTS


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


def too_many_requests(response, *, retry_after: int):
    """Mark a response as a refusal by an abuse limit: 429 with Retry-After."""
    response.status_code = 429
    response["Retry-After"] = str(max(int(retry_after), 1))
    return response


def client_ip(request) -> str:
    """The client's IP address: REMOTE_ADDR, or with TRUSTED_PROXY_HEADER set, the
    address the outermost of our TRUSTED_PROXY_COUNT proxies saw: the entry that
    many places from the end of the header, which each proxy appends to (entries
    before it are the client's own words). "unknown" when unreadable, which the log
    says once: every such request shares one abuse-limit budget."""
    raw = request.META.get("REMOTE_ADDR", "")
    if settings.TRUSTED_PROXY_HEADER:
        header = "HTTP_" + settings.TRUSTED_PROXY_HEADER.upper().replace("-", "_")
        entries = [e.strip() for e in request.META.get(header, "").split(",")]
        entries = [e for e in entries if e]
        count = max(settings.TRUSTED_PROXY_COUNT, 1)
        if len(entries) >= count:
            raw = entries[-count]
    with_port = _WITH_PORT.match(raw)
    if with_port:
        raw = with_port["v6"] or with_port["v4"]
    try:
        address = ipaddress.ip_address(raw)
    except ValueError:
        _say_unknown(raw)
        return "unknown"
    if address.version == 6 and address.ipv4_mapped is not None:
        return str(address.ipv4_mapped)
    return str(address)


def _say_unknown(raw: str) -> None:
    global _unknown_said
    if _unknown_said:
        return
    _unknown_said = True
    logger.warning(
        "Cannot read the client's address (%.60r): such requests share one budget "
        "of every abuse limit (sign-ups, logins). Behind a proxy or on a Unix socket, "
        "set TRUSTED_PROXY_HEADER (README, Deploy).",
        raw,
    )
