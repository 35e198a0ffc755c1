import secrets
from functools import cache

from django.middleware.csrf import CSRF_ALLOWED_CHARS, CSRF_SECRET_LENGTH
from django.templatetags.static import static
from django.utils.html import escape

from config.reverse import url_maker


@cache
def _assets() -> dict[str, str]:
    # The manifest cannot change under a running process, so each URL is looked up
    # once instead of three static lookups on every page.
    return {
        "css": static("css/site.css"),
        "js": static("js/site.js"),
        "favicon": static("favicon.svg"),
    }


def assets(request):
    """`assets.css`, `.js`, `.favicon`: the static files every page links; and
    `url(name, *args)` for this response, the script prefix read once (the
    environment's global `url` reads it on every link: `config.reverse`)."""
    return {"assets": _assets(), "url": url_maker()}


_INDEX = {char: i for i, char in enumerate(CSRF_ALLOWED_CHARS)}
# Random bytes below this map onto the alphabet uniformly; the rest are dropped.
_UNBIASED = 256 - 256 % len(CSRF_ALLOWED_CHARS)


def _random_string(length: int) -> str:
    """Uniformly random CSRF characters from one read of the OS's random source.

    Django's get_random_string reads it once per character (`secrets.choice`): 64
    system calls per page for a new visitor, a measured cost on our machines.
    """
    chars: list[str] = []
    while len(chars) < length:
        chars += [
            CSRF_ALLOWED_CHARS[byte % len(CSRF_ALLOWED_CHARS)]
            for byte in secrets.token_bytes(length + 8)
            if byte < _UNBIASED
        ]
    return "".join(chars[:length])


def csrf_token_for(request) -> str:
    """What `django.middleware.csrf.get_token` returns, with the same bookkeeping.

    The request's CSRF secret (a new one, sent as the cookie, if it has none),
    masked with a fresh random mask per page in the format Django's middleware
    unmasks (`mask + cipher`, cipher[i] = secret[i] + mask[i] in the alphabet).
    """
    if "CSRF_COOKIE" in request.META:
        secret = request.META["CSRF_COOKIE"]
    else:
        secret = request.META["CSRF_COOKIE"] = _random_string(CSRF_SECRET_LENGTH)
    request.META["CSRF_COOKIE_NEEDS_UPDATE"] = True
    mask = _random_string(CSRF_SECRET_LENGTH)
    size = len(CSRF_ALLOWED_CHARS)
    cipher = "".join(
        CSRF_ALLOWED_CHARS[(_INDEX[s] + _INDEX[m]) % size]
        for s, m in zip(secret, mask, strict=True)
    )
    return mask + cipher


def csrf_input_html(token: str) -> str:
    """The hidden form field that carries a CSRF token (every form of the site)."""
    return f'<input type="hidden" name="csrfmiddlewaretoken" value="{escape(token)}">'


class _PageToken:
    """The page's one CSRF token, made when a template first needs it (`str()`).

    A plain class, not a lazy proxy: templates ask for it once per form.
    """

    __slots__ = ("_request", "_token")

    def __init__(self, request):
        self._request = request
        self._token: str | None = None

    def __str__(self) -> str:
        if self._token is None:
            self._token = csrf_token_for(self._request)
        return self._token

    def __html__(self) -> str:
        return str(self)


class _PageTokenInput:
    __slots__ = ("_token",)

    def __init__(self, token: _PageToken):
        self._token = token

    def __html__(self) -> str:
        return csrf_input_html(str(self._token))

    __str__ = __html__


def csrf(request):
    """`csrf_token` and `csrf_input`, made once per page however many forms use them.

    (The backend's own are lazy strings that mask a new token at every use.)
    """
    token = _PageToken(request)
    return {"csrf_token": token, "csrf_input": _PageTokenInput(token)}
