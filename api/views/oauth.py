"""OAuth 2: the authorization page (an HTML page of the site, behind its login),
the token and revocation endpoints, and the server's metadata (RFC 8414).

The page is a plain view with the site's cookie and CSRF; the endpoints go through
the API's wrapper with no token read (`auth=NONE`), CSRF-exempt, with CORS.
"""

from __future__ import annotations

import base64
import binascii
from dataclasses import dataclass
from urllib.parse import unquote, urlencode, urlsplit, urlunsplit

from django.conf import settings
from django.http import HttpResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods

from accounts import services as account_services
from accounts.domain import BearerCredentials
from accounts.selectors import app_grant_get
from api import scopes, selectors, services
from api.domain import (
    OOB,
    PKCE_RE,
    InvalidClient,
    OAuthApp,
    OAuthError,
    redirect_source,
)
from api.http import NONE, ApiError, Op, Reply, endpoint, param, params
from config.reverse import url_for

STATE_MAX_LENGTH = 2000

# RFC 6749's descriptions, in Doorkeeper's words (what Mastodon answers).
_DESCRIPTIONS = {
    "invalid_request": "The request is missing a required parameter, includes an "
    "unsupported parameter value, or is otherwise malformed.",
    "invalid_client": "Client authentication failed due to unknown client, no client "
    "authentication included, or unsupported authentication method.",
    "invalid_grant": "The provided authorization grant is invalid, expired, revoked, "
    "does not match the redirection URI used in the authorization request, or was "
    "issued to another client.",
    "unsupported_grant_type": "The authorization grant type is not supported by the "
    "authorization server.",
}


class _Refused(Exception):
    """An authorization request the page cannot grant: said on the page, never
    sent to a redirect URI that may not be the app's."""


@dataclass(frozen=True, slots=True)
class _Asked:
    """An authorization request, checked against its app."""

    app: OAuthApp
    redirect_uri: str
    scopes: tuple[str, ...]
    state: str | None
    challenge: str

    def fields(self) -> list[tuple[str, str]]:
        """The request as the page's form sends it back (and the login's `next`)."""
        fields = [
            ("response_type", "code"),
            ("client_id", self.app.client_id),
            ("redirect_uri", self.redirect_uri),
            ("scope", " ".join(self.scopes)),
        ]
        if self.state is not None:
            fields.append(("state", self.state))
        if self.challenge:
            fields += [("code_challenge", self.challenge)]
            fields += [("code_challenge_method", "S256")]
        return fields


def _asked(values, app: OAuthApp | None) -> _Asked:
    """The request if its app may be asked this; _Refused saying why not."""
    if values.get("response_type") != "code":
        raise _Refused("This server answers response_type=code only.")
    if app is None:
        raise _Refused(
            "No app is registered here with this client_id (an app no one "
            "authorized is forgotten after a day)."
        )
    redirect_uri = values.get("redirect_uri")
    if not redirect_uri and len(app.redirect_uris) == 1:
        redirect_uri = app.redirect_uris[0]
    if redirect_uri not in app.redirect_uris:
        raise _Refused(f"{app.name} did not register this redirect URI.")
    asked = scopes.parse(values.get("scope"))
    if asked is None:
        raise _Refused("The app asked for a scope this server does not know.")
    asked = asked or scopes.DEFAULT
    if not scopes.within(asked, app.scopes):
        raise _Refused(f"The app asked for more than {app.name} registered for.")
    challenge = values.get("code_challenge") or ""
    if challenge and (
        values.get("code_challenge_method") != "S256" or not PKCE_RE.match(challenge)
    ):
        raise _Refused("Only PKCE with code_challenge_method=S256 is supported.")
    state = values.get("state")
    if state is not None and len(state) > STATE_MAX_LENGTH:
        raise _Refused("The state parameter is too long.")
    return _Asked(app, redirect_uri, asked, state, challenge)


def _to_app(uri: str, query: dict[str, str]) -> HttpResponse:
    """A redirect to the app's registered URI with `query` added (any scheme the app
    registered: Django's redirect allows web schemes only)."""
    parts = urlsplit(uri)
    joined = "&".join(q for q in (parts.query, urlencode(query)) if q)
    response = HttpResponse(status=302)
    response["Location"] = urlunsplit(parts._replace(query=joined))
    return response


def _with_state(asked: _Asked, query: dict[str, str]) -> dict[str, str]:
    # As sent, "None" included (Mastodon.py sends that when it has none).
    return query if asked.state is None else {**query, "state": asked.state}


def _login_then_back(asked: _Asked) -> str:
    """The login page, which comes back to this request's consent page."""
    back = f"{url_for('api:oauth_authorize')}?{urlencode(asked.fields())}"
    return f"{url_for(settings.LOGIN_URL)}?{urlencode({'next': back})}"


def _consent_page(request, asked: _Asked) -> HttpResponse:
    context = {
        "app": asked.app,
        "asked": asked,
        "oob": asked.redirect_uri == OOB,
        "scope_words": [scopes.words(scope) for scope in asked.scopes],
        "fields": asked.fields(),
        # "Use another account": log out (a POST), then log in and come back.
        "another_account": _login_then_back(asked),
    }
    response = render(request, "api/authorize.html", context)
    # The Authorize button's answer redirects to the app: the page's form-action
    # must allow it (Chrome applies form-action to a form's redirects).
    source = redirect_source(asked.redirect_uri)
    policy = settings.CONTENT_SECURITY_POLICY
    if source and "form-action 'self'" in policy:
        response["Content-Security-Policy"] = policy.replace(
            "form-action 'self'", f"form-action 'self' {source}"
        )
    return response


def _decided(request, asked: _Asked) -> HttpResponse:
    """Approve (a one-time code for the app) or deny, as the form's button says."""
    oob = asked.redirect_uri == OOB
    if request.POST.get("decision") != "approve":
        if oob:
            context = {"code": None, "app_name": asked.app.name}
            return render(request, "api/authorize_done.html", context)
        return _to_app(
            asked.redirect_uri,
            _with_state(
                asked,
                {
                    "error": "access_denied",
                    "error_description": "The resource owner or authorization "
                    "server denied the request.",
                },
            ),
        )
    code = services.authorization_code_create(
        app=asked.app,
        uid=request.user.id,
        redirect_uri=asked.redirect_uri,
        scopes=asked.scopes,
        challenge=asked.challenge,
        issued=request.reads.checked_at,
    )
    if oob:
        # Shown in this answer, not behind a redirect: the code stays out of URLs
        # (history, logs). Reloading posts again and shows a new code.
        context = {"code": code, "app_name": asked.app.name}
        return render(request, "api/authorize_done.html", context)
    return _to_app(asked.redirect_uri, _with_state(asked, {"code": code}))


@require_http_methods(["GET", "HEAD", "POST"])
def authorize(request):
    """`/oauth/authorize`: ask the signed-in user "Authorize <app>?" (GET), then
    act on their answer (POST, with CSRF). Anyone else logs in first and comes
    back. The page always asks, and always offers another account ("Use another
    account": a logout POST, then the login page): what Mastodon's `force_login`
    is for, an app adding a second account, without a GET that logs anyone out.
    `lang` is read by no one."""
    values = request.POST if request.method == "POST" else request.GET
    found = selectors.app_queue(request.reads, client_id=values.get("client_id", ""))
    signed_in = request.user.is_authenticated  # the app's read rides along
    try:
        asked = _asked(values, found.value)
    except _Refused as error:
        return render(
            request, "api/authorize_error.html", {"reason": str(error)}, status=400
        )
    if not signed_in:
        return redirect(_login_then_back(asked))
    if request.method == "POST":
        return _decided(request, asked)
    return _consent_page(request, asked)


def _oauth_error(code: str, status: int = 400, description: str | None = None):
    headers = {"Cache-Control": "no-store"}
    if status == 401:
        headers["WWW-Authenticate"] = 'Basic realm="oauth", error="invalid_client"'
    return ApiError(
        status,
        code,
        description=description or _DESCRIPTIONS.get(code, ""),
        headers=headers,
    )


def _client_credentials(request, values) -> tuple[str | None, str | None]:
    """The client's id and secret: HTTP Basic (client_secret_basic) or the body's
    fields (client_secret_post)."""
    scheme, _, encoded = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() == "basic":
        try:
            pair = base64.b64decode(encoded.strip(), validate=True).decode()
        except (binascii.Error, UnicodeDecodeError) as error:
            raise _oauth_error("invalid_client", 401) from error
        client_id, _, secret = pair.partition(":")
        return unquote(client_id), unquote(secret)
    return param(values, "client_id"), param(values, "client_secret") or None


def token_issue(request) -> Reply:
    """`POST /oauth/token`: an authorization code for an access token."""
    values = params(request)
    grant_type = param(values, "grant_type")
    if not grant_type:
        raise _oauth_error(
            "invalid_request", description="Missing required parameter: grant_type."
        )
    if grant_type != "authorization_code":
        raise _oauth_error("unsupported_grant_type")
    client_id, client_secret = _client_credentials(request, values)
    for name, value in (
        ("client_id", client_id),
        ("code", param(values, "code")),
        ("redirect_uri", param(values, "redirect_uri")),
    ):
        if not value:
            raise _oauth_error(
                "invalid_request", description=f"Missing required parameter: {name}."
            )
    try:
        credentials, grant = services.token_exchange(
            client_id=client_id,
            client_secret=client_secret,
            code=param(values, "code"),
            redirect_uri=param(values, "redirect_uri"),
            verifier=param(values, "code_verifier"),
        )
    except InvalidClient as error:
        raise _oauth_error(error.code, 401) from error
    except OAuthError as error:
        raise _oauth_error(error.code) from error
    body = {
        "access_token": credentials.access_token,
        "token_type": "Bearer",
        "scope": " ".join(grant.scopes),
        "created_at": int(grant.created),
    }
    return Reply(body, headers={"Cache-Control": "no-store", "Pragma": "no-cache"})


def token_revoke(request) -> dict:
    """`POST /oauth/revoke` (RFC 7009): end an access token; `{}` whatever it was.

    Whoever holds a token may end it; a client that names itself may end only the
    tokens issued to it."""
    values = params(request)
    client_id, _ = _client_credentials(request, values)
    credentials = BearerCredentials.from_token(param(values, "token") or "")
    grant = app_grant_get(credentials=credentials) if credentials else None
    if grant is not None and client_id in (None, "", grant.client_id):
        account_services.app_token_revoke(credentials=credentials)
    return {}


def metadata(request) -> dict:
    """RFC 8414's authorization server metadata, as Mastodon 4.3 serves it."""
    base = f"{request.scheme}://{request.get_host()}"
    return {
        "issuer": base + "/",
        "service_documentation": "https://docs.joinmastodon.org/",
        "authorization_endpoint": base + url_for("api:oauth_authorize"),
        "token_endpoint": base + url_for("api:oauth_token"),
        "app_registration_endpoint": base + url_for("api:apps"),
        "revocation_endpoint": base + url_for("api:oauth_revoke"),
        "scopes_supported": list(scopes.ALL),
        "response_types_supported": ["code"],
        "response_modes_supported": ["query", "fragment", "form_post"],
        "code_challenge_methods_supported": ["S256"],
        "grant_types_supported": ["authorization_code"],
        "token_endpoint_auth_methods_supported": [
            "client_secret_basic",
            "client_secret_post",
        ],
    }


token = endpoint(POST=Op(token_issue, auth=NONE))
revoke = endpoint(POST=Op(token_revoke, auth=NONE))
server_metadata = endpoint(GET=Op(metadata, auth=NONE))
