"""Apps: `POST /api/v1/apps` registers one; `verify_credentials` names the token's."""

from __future__ import annotations

from accounts import limits
from api import selectors, services
from api.domain import InvalidApp, OAuthApp
from api.http import (
    NONE,
    ApiError,
    Op,
    endpoint,
    param,
    param_list,
    params,
    unprocessable,
)
from config.http import client_ip


def application(app: OAuthApp) -> dict:
    """Mastodon 4.3's Application (what verify_credentials answers)."""
    return {
        "id": app.client_id,
        "name": app.name,
        "website": app.website or None,
        "scopes": list(app.scopes),
        "redirect_uri": "\n".join(app.redirect_uris),
        "redirect_uris": list(app.redirect_uris),
        "vapid_key": "",
    }


def app_register(request) -> dict:
    """Register an app: a CredentialApplication, whose secret only this answer
    holds."""
    values = params(request)
    try:
        app, secret = services.app_create(
            name=param(values, "client_name") or "",
            website=param(values, "website") or "",
            redirect_uris=param_list(values, "redirect_uris"),
            scope_text=param(values, "scopes"),
            limit=limits.apps(client_ip(request)),
        )
    except InvalidApp as error:
        raise unprocessable(str(error)) from error
    return {
        **application(app),
        "client_id": app.client_id,
        "client_secret": secret,
        "client_secret_expires_at": 0,
    }


def app_verify(request) -> dict:
    """The app the token was issued to: its name, website and scopes."""
    grant = request.reads.grant.value if request.reads.grant is not None else None
    if grant is None:
        raise ApiError(401, "The access token is invalid")
    app = selectors.app_get(client_id=grant.client_id)
    if app is not None:
        return application(app)
    # A token made without the OAuth flow (tests, tools): what its grant says.
    return {
        "id": grant.client_id,
        "name": grant.app,
        "website": grant.website or None,
        "scopes": list(grant.scopes),
        "redirect_uri": "",
        "redirect_uris": [],
        "vapid_key": "",
    }


register = endpoint(POST=Op(app_register, auth=NONE))
verify = endpoint(GET=Op(app_verify))
