"""Writes of the API's OAuth side: registering apps, authorization codes, and
trading a code for an access token (`accounts.services` stores the token)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
import time
from collections.abc import Iterable
from urllib.parse import urlsplit

from accounts import limits
from accounts.domain import AppGrant, BearerCredentials, InvalidCredentials
from accounts.selectors import token_hash
from accounts.services import app_token_create
from api import keys, scopes
from api.domain import (
    OOB,
    PKCE_RE,
    SECRET_RE,
    AuthCode,
    InvalidApp,
    InvalidClient,
    InvalidGrant,
    OAuthApp,
)
from api.selectors import app_get
from config.pipelines import LuaScript, pipeline_run
from config.redis import get_redis

# An app no one authorized within a day is forgotten: registrations cost a client
# address its apps budget, and only those a user took up are kept for good.
APP_UNUSED_TTL = 86400
CODE_TTL = 600  # Doorkeeper's default, which Mastodon keeps
APP_NAME_MAX_LENGTH = 60  # Mastodon's
URL_MAX_LENGTH = 2000  # Mastodon's, for the website and each redirect URI
REDIRECT_URIS_MAX = 10
# Doorkeeper's `forbid_redirect_uri` in Mastodon: schemes that would run in a page.
_FORBIDDEN_SCHEMES = frozenset({"javascript", "data", "vbscript"})

# KEYS: the app. ARGV: its TTL, then field, value pairs. Stored and set to expire in
# one step: no app is left without its TTL.
_APP_STORE = LuaScript(
    """
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('EXPIRE', KEYS[1], ARGV[1])
return 1
"""
)


def _redirect_uris_clean(values: Iterable[str]) -> tuple[str, ...]:
    """Redirect URIs as registered: split on whitespace (one string may hold
    several), each absolute, without a fragment, of no scheme that runs script."""
    uris = tuple(dict.fromkeys(uri for value in values for uri in value.split()))
    if not uris:
        raise InvalidApp("Redirect URI can't be blank")
    if len(uris) > REDIRECT_URIS_MAX:
        raise InvalidApp(f"Redirect URI: at most {REDIRECT_URIS_MAX} may be given")
    for uri in uris:
        if uri == OOB:
            continue
        if len(uri) > URL_MAX_LENGTH or not uri.isprintable():
            raise InvalidApp("Redirect URI is too long or holds control characters")
        parts = urlsplit(uri)
        if not parts.scheme or not (parts.netloc or parts.path):
            raise InvalidApp("Redirect URI must be an absolute URI.")
        if parts.scheme.lower() in _FORBIDDEN_SCHEMES:
            raise InvalidApp("Redirect URI is forbidden by the server.")
        if parts.fragment or "#" in uri:
            raise InvalidApp("Redirect URI cannot contain a fragment.")
    return uris


def _website_clean(website: str) -> str:
    website = website.strip()
    if not website:
        return ""
    parts = urlsplit(website)
    if (
        len(website) > URL_MAX_LENGTH
        or parts.scheme not in ("http", "https")
        or not parts.netloc
        or not website.isprintable()
    ):
        raise InvalidApp("Website is invalid")
    return website


def app_create(
    *,
    name: str,
    website: str,
    redirect_uris: Iterable[str],
    scope_text: str | None,
    limit: limits.Limit | None = None,
) -> tuple[OAuthApp, str]:
    """Register an app (InvalidApp says what is wrong); return it and its client
    secret, which is shown this once and stored only hashed.

    With `limit` (the client address's apps budget) the registration is taken from
    it first, or refused with TooManyAttempts.
    """
    name = " ".join(name.split())
    if not name:
        raise InvalidApp("Application name can't be blank")
    if len(name) > APP_NAME_MAX_LENGTH:
        raise InvalidApp(
            f"Application name is too long (maximum is {APP_NAME_MAX_LENGTH} "
            "characters)"
        )
    uris = _redirect_uris_clean(redirect_uris)
    asked = scopes.parse(scope_text)
    if asked is None:
        raise InvalidApp("Scopes doesn't match configured on the server.")
    website = _website_clean(website)
    if limit is not None:
        limits.take(limit)
    secret = secrets.token_urlsafe(32)
    app = OAuthApp(
        client_id=secrets.token_urlsafe(32),
        name=name,
        website=website,
        redirect_uris=uris,
        scopes=asked or scopes.DEFAULT,
        secret_hash=token_hash(secret),
        created=time.time(),
    )
    fields = [v for pair in app.to_hash().items() for v in pair]
    _APP_STORE(keys=[keys.app(app.client_id)], args=[APP_UNUSED_TTL, *fields])
    return app, secret


def app_authenticate(*, client_id: str, client_secret: str | None) -> OAuthApp:
    """The app these credentials name; InvalidClient when it is unknown or, with a
    secret, the secret is wrong. Without a secret the app is only named (a public
    client, which must then prove itself with PKCE)."""
    app = app_get(client_id=client_id)
    if app is None:
        raise InvalidClient("Unknown client")
    if client_secret is not None and not hmac.compare_digest(
        token_hash(client_secret), app.secret_hash
    ):
        raise InvalidClient("Wrong client secret")
    return app


def authorization_code_create(
    *,
    app: OAuthApp,
    uid: int,
    redirect_uri: str,
    scopes: tuple[str, ...],
    challenge: str = "",
    issued: float | None = None,
) -> str:
    """Issue a one-time code (CODE_TTL) for what the user just authorized, stored
    only hashed; the app a user took up is kept for good (no TTL any more).

    `issued`: when the session that authorized it was proven (`PageReads.checked_at`;
    now by default). The code's token is refused if the user revoked their apps'
    access after it (a password change, "log out everywhere"): counted from the
    check, a revocation landing between the check and this call ends it too."""
    code = secrets.token_urlsafe(32)
    grant = AuthCode(
        client_id=app.client_id,
        uid=uid,
        redirect_uri=redirect_uri,
        scopes=scopes,
        challenge=challenge,
        issued=time.time() if issued is None else issued,
    )

    def store(pipe) -> None:
        pipe.persist(keys.app(app.client_id))
        pipe.set(keys.auth_code(token_hash(code)), grant.to_json(), ex=CODE_TTL)

    pipeline_run(store)
    return code


def _pkce_matches(challenge: str, verifier: str | None) -> bool:
    """RFC 7636 S256: the challenge is BASE64URL(SHA256(verifier)), unpadded."""
    if verifier is None or not PKCE_RE.match(verifier):
        return False
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    computed = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return hmac.compare_digest(computed, challenge)


def token_exchange(
    *,
    client_id: str,
    client_secret: str | None,
    code: str,
    redirect_uri: str,
    verifier: str | None,
) -> tuple[BearerCredentials, AppGrant]:
    """Trade an authorization code for an access token (RFC 6749 4.1.3, RFC 7636).

    The client is checked before the code is touched (a stranger cannot spend a
    code by guessing at the secret); then the code is redeemed, once, whatever
    follows. A code issued with a PKCE challenge needs its verifier; one without
    needs the client's secret. InvalidClient, InvalidGrant otherwise.
    """
    app = app_authenticate(client_id=client_id, client_secret=client_secret)
    if not SECRET_RE.match(code):
        raise InvalidGrant("Unknown code")
    stored = get_redis().getdel(keys.auth_code(token_hash(code)))
    grant = AuthCode.from_json(stored)
    if grant is None:
        raise InvalidGrant("Unknown, used or expired code")
    if grant.client_id != app.client_id or grant.redirect_uri != redirect_uri:
        raise InvalidGrant("The code was issued to another client or redirect URI")
    if grant.challenge:
        if not _pkce_matches(grant.challenge, verifier):
            raise InvalidGrant("The code verifier does not match the challenge")
    elif client_secret is None:
        raise InvalidClient("No client authentication included")
    try:
        return app_token_create(
            uid=grant.uid,
            client_id=app.client_id,
            app=app.name,
            website=app.website,
            scopes=grant.scopes,
            authorized_at=grant.issued,
        )
    except InvalidCredentials as error:
        raise InvalidGrant(
            "The account that authorized this is gone, or revoked every app's "
            "access since"
        ) from error
