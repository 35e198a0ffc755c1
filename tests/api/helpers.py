"""What the API tests share: a token for a user, a client that sends it."""

from __future__ import annotations

from django.test import Client

from accounts import services

ALL_SCOPES = ("read", "write", "follow", "push")


def token_for(user, scopes: tuple[str, ...] = ALL_SCOPES, app: str = "Test app") -> str:
    """An access token issued to a test app for `user` (as the OAuth flow issues
    one), as the client holds it."""
    credentials, _ = services.app_token_create(
        uid=user.id, client_id="test-client", app=app, website="", scopes=scopes
    )
    return credentials.access_token


def api_client(token: str | None = None) -> Client:
    """A test client that sends this bearer token (none: anonymous)."""
    if token is None:
        return Client()
    return Client(headers={"Authorization": f"Bearer {token}"})
