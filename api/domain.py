"""The OAuth side of the API: registered apps and authorization codes, and the
errors of their services."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import ClassVar
from urllib.parse import urlsplit

# A client id or secret, an authorization code: 256 random bits, URL-safe base64.
SECRET_RE = re.compile(r"^[A-Za-z0-9_-]{43}\Z", re.ASCII)
# RFC 7636: a verifier is 43-128 unreserved characters; an S256 challenge is the
# URL-safe base64 of a SHA-256 (43 characters), checked by the same rule.
PKCE_RE = re.compile(r"^[A-Za-z0-9._~-]{43,128}\Z", re.ASCII)
OOB = "urn:ietf:wg:oauth:2.0:oob"


class OAuthError(Exception):
    """A refused OAuth request: RFC 6749's error code, and what went wrong."""

    code: ClassVar[str] = "invalid_request"

    def __init__(self, description: str):
        super().__init__(description)
        self.description = description


class InvalidClient(OAuthError):
    code = "invalid_client"


class InvalidGrant(OAuthError):
    code = "invalid_grant"


class InvalidApp(Exception):
    """An app registration refused: what is wrong, for the developer."""


@dataclass(frozen=True, slots=True)
class OAuthApp:
    """A registered app. The one owner of the `oauthapp:{<client_id>}` layout."""

    client_id: str
    name: str
    website: str
    redirect_uris: tuple[str, ...]
    scopes: tuple[str, ...]
    secret_hash: str
    created: float

    FIELDS: ClassVar[tuple[str, ...]] = (
        "name",
        "website",
        "redirect_uris",
        "scopes",
        "secret",
        "created",
    )

    def to_hash(self) -> dict[str, str]:
        return {
            "name": self.name,
            "website": self.website,
            "redirect_uris": "\n".join(self.redirect_uris),
            "scopes": " ".join(self.scopes),
            "secret": self.secret_hash,
            "created": f"{self.created:.0f}",
        }

    @classmethod
    def from_fields(cls, client_id: str, values: list[str | None]) -> OAuthApp | None:
        """The app from an HMGET of `FIELDS`; None when there is none."""
        name, website, redirect_uris, scopes, secret, created = values
        if name is None or secret is None:
            return None
        return cls(
            client_id=client_id,
            name=name,
            website=website or "",
            redirect_uris=tuple((redirect_uris or "").split("\n")),
            scopes=tuple((scopes or "").split()),
            secret_hash=secret,
            created=float(created or 0),
        )


@dataclass(frozen=True, slots=True)
class AuthCode:
    """What an authorization code grants, once redeemed. The one owner of the
    `oauthcode:<hash>` layout (JSON)."""

    client_id: str
    uid: int
    redirect_uri: str
    scopes: tuple[str, ...]
    challenge: str = ""  # PKCE S256; empty when the client sent none
    # When it was issued (unix seconds): a code older than the user's last "revoke
    # every app" (log out everywhere, a password change) gives no token.
    issued: float = 0.0

    def to_json(self) -> str:
        return json.dumps(
            {
                "client": self.client_id,
                "uid": self.uid,
                "redirect_uri": self.redirect_uri,
                "scopes": " ".join(self.scopes),
                "challenge": self.challenge,
                "issued": self.issued,
            },
            separators=(",", ":"),
        )

    @classmethod
    def from_json(cls, value: str | None) -> AuthCode | None:
        if not value:
            return None
        try:
            found = json.loads(value)
            return cls(
                client_id=str(found["client"]),
                uid=int(found["uid"]),
                redirect_uri=str(found["redirect_uri"]),
                scopes=tuple(str(found["scopes"]).split()),
                challenge=str(found.get("challenge") or ""),
                issued=float(found.get("issued") or 0),
            )
        except (ValueError, KeyError, TypeError):
            return None


def redirect_source(uri: str) -> str | None:
    """What a Content-Security-Policy's `form-action` names to let a form's answer
    redirect to `uri`: its origin (http, https) or its scheme (an app's own, like
    `myapp:`); None for the out-of-band URI or anything a header cannot carry."""
    if uri == OOB:
        return None
    parts = urlsplit(uri)
    if parts.scheme in ("http", "https"):
        if not re.fullmatch(r"[A-Za-z0-9.:\[\]-]+", parts.netloc or ""):
            return None
        return f"{parts.scheme}://{parts.netloc}"
    if re.fullmatch(r"[A-Za-z][A-Za-z0-9+.-]*", parts.scheme or ""):
        return f"{parts.scheme}:"
    return None
