"""Resolve `request.user` lazily from the auth cookie."""

from __future__ import annotations

from django.conf import settings
from django.utils.cache import patch_cache_control, patch_vary_headers
from django.utils.functional import SimpleLazyObject

from accounts.domain import Credentials
from accounts.selectors import viewer_get


class AuthenticationMiddleware:
    """Parse the cookie (no I/O) and look the user up only when a view asks.

    A page that reads the viewer together with its own data (see
    `accounts.selectors.viewer_queue`) replaces `request.user` with what it found.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        raw = request.COOKIES.get(settings.AUTH_COOKIE_NAME)
        credentials = Credentials.parse(raw)
        request.credentials = credentials
        request.auth_refused = False

        def load():
            viewer = viewer_get(credentials=credentials)
            viewer_resolved(request, viewer)
            return viewer

        request.user = SimpleLazyObject(load)
        response = self.get_response(request)
        if raw is not None:
            # Pages for a signed-in person are private: never cached, never shared.
            patch_vary_headers(response, ("Cookie",))
            patch_cache_control(response, private=True, no_store=True)
            stale = credentials is None or request.auth_refused
            if stale and settings.AUTH_COOKIE_NAME not in response.cookies:
                response.delete_cookie(settings.AUTH_COOKIE_NAME, samesite="Lax")
        return response


def viewer_resolved(request, viewer) -> None:
    """Record who the credentials proved; a refused cookie is cleared on the way out."""
    request.user = viewer
    request.auth_refused = (
        request.credentials is not None and not viewer.is_authenticated
    )
