"""A device's short label ("Firefox on Linux") from its User-Agent header.

A few substring checks, not a full parser (ua-parser and its regex list would be a
dependency for one line of the settings page): the label only helps a person tell
their own devices apart, so "Chrome" for a rare Chromium-based browser is fine. A
header is client-controlled: only its first `_MAX_LENGTH` characters are looked at,
and the label is made of our own words, never of the header's text.
"""

from __future__ import annotations

_MAX_LENGTH = 512

# Order matters: Chromium-based browsers also say "Chrome/", and Chrome "Safari/".
_BROWSERS = (
    (("Edg/", "EdgA/", "EdgiOS/", "Edge/"), "Edge"),
    (("OPR/", "Opera"), "Opera"),
    (("SamsungBrowser/",), "Samsung Internet"),
    (("Vivaldi/",), "Vivaldi"),
    (("Firefox/", "FxiOS/"), "Firefox"),
    (("Chromium/",), "Chromium"),
    (("Chrome/", "CriOS/"), "Chrome"),
    (("Version/",), "Safari"),  # Safari alone says Version/ and Safari/
    (("MSIE ", "Trident/"), "Internet Explorer"),
    (("curl/",), "curl"),
)

# iOS says "like Mac OS X" and Android says "Linux": those come first.
_SYSTEMS = (
    (("iPhone",), "iPhone"),
    (("iPad",), "iPad"),
    (("Android",), "Android"),
    (("CrOS",), "ChromeOS"),
    (("Windows",), "Windows"),
    (("Macintosh", "Mac OS X"), "macOS"),
    (("Linux", "X11"), "Linux"),
)

UNKNOWN = "Unknown browser"


def _first(header: str, table: tuple[tuple[tuple[str, ...], str], ...]) -> str | None:
    for needles, name in table:
        if any(needle in header for needle in needles):
            return name
    return None


def device_label(user_agent: str) -> str:
    """'Firefox on Linux', 'Safari on iPhone', 'curl', ...; UNKNOWN when none fits."""
    header = user_agent[:_MAX_LENGTH]
    browser, system = _first(header, _BROWSERS), _first(header, _SYSTEMS)
    if browser and system:
        return f"{browser} on {system}"
    if browser or system:
        return browser or f"A browser on {system}"
    return UNKNOWN
