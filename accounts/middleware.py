"""Give each request its read batch, with the auth check queued first."""

from __future__ import annotations

from django.conf import settings
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.functional import SimpleLazyObject

from accounts.domain import BearerCredentials, Credentials
from accounts.selectors import PageReads


def _attach(request, credentials: Credentials | BearerCredentials | None) -> PageReads:
    """Give the request its claimed credentials, its read batch with their check
    queued first, and the lazy `request.user` that check resolves."""
    request.credentials = credentials
    request.reads = reads = PageReads(credentials)
    request.user = SimpleLazyObject(lambda: reads.viewer.value)
    return reads


class AuthenticationMiddleware:
    """Parse the auth cookie (no I/O) and queue its check in `request.reads`.

    The check reaches Redis with the page's own first reads, in one round trip, or
    when something reads `request.user` first. A cookie that proved nothing is
    cleared on the way out.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if request.path_info.startswith(settings.API_PATH_PREFIX):
            return self._api(request)
        raw = request.COOKIES.get(settings.AUTH_COOKIE_NAME)
        credentials = Credentials.parse(raw)
        reads = _attach(request, credentials)
        response = self.get_response(request)
        # A response that is the same for everyone (an avatar) says so: `public`.
        if raw is not None and not getattr(response, "public", False):
            # Pages for a signed-in person are private: never cached, never shared.
            patch_vary_headers(response, ("Cookie",))
            patch_cache_control(response, private=True, no_store=True)
            refused = credentials is None or (
                reads.viewer.done and not reads.viewer.value.is_authenticated
            )
            if refused and settings.AUTH_COOKIE_NAME not in response.cookies:
                response.delete_cookie(settings.AUTH_COOKIE_NAME, samesite="Lax")
        return response

    def _api(self, request):
        """An API request: credentials from its bearer token only, never the cookie
        (so the API needs no CSRF check); the response varies with the token."""
        _attach(request, BearerCredentials.parse(request.headers.get("Authorization")))
        request.is_api = True
        response = self.get_response(request)
        if "Authorization" in request.headers:
            patch_vary_headers(response, ("Authorization",))
            patch_cache_control(response, private=True, no_store=True)
        return response
