"""The client API's routes (Mastodon's paths), and the OAuth endpoints.

Clients ask for a path with or without a trailing slash (Mastodon.py asks for
`/api/v1/instance/`; Rails matches both), so every route takes both (`route`).
"""

import re

from django.urls import re_path

from api.views import accounts, apps, instance, oauth

_PARAMETERS = {"id": "[0-9]{1,19}", "tag": "[^/]{1,100}"}


def route(pattern: str, view, name: str):
    """A route matching `pattern` (`<id>`, `<tag>` for arguments) with or without a
    trailing slash."""

    def argument(match: re.Match) -> str:
        return f"(?P<{match[1]}>{_PARAMETERS[match[1]]})"

    regex = re.sub(
        r"<(\w+)>", argument, re.escape(pattern).replace(r"\<", "<").replace(r"\>", ">")
    )
    return re_path(f"^{regex}/?$", view, name=name)


app_name = "api"
urlpatterns = [
    route("api/v1/instance", instance.v1, "instance_v1"),
    route("api/v2/instance", instance.v2, "instance_v2"),
    route("api/v1/accounts/verify_credentials", accounts.verify, "verify_credentials"),
    # Apps and OAuth 2 (the authorization page is an HTML page of the site).
    route("api/v1/apps", apps.register, "apps"),
    route("api/v1/apps/verify_credentials", apps.verify, "apps_verify_credentials"),
    route("oauth/authorize", oauth.authorize, "oauth_authorize"),
    route("oauth/token", oauth.token, "oauth_token"),
    route("oauth/revoke", oauth.revoke, "oauth_revoke"),
    route(
        ".well-known/oauth-authorization-server",
        oauth.server_metadata,
        "oauth_metadata",
    ),
]
