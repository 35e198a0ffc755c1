"""The client API's routes (Mastodon's paths), and the OAuth endpoints.

Clients ask for a path with or without a trailing slash (Mastodon.py asks for
`/api/v1/instance/`; Rails matches both), so every route takes both (`route`).
"""

import re

from django.urls import re_path

from api.views import accounts, instance, notifications, search

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
    # Notifications and search (helper D).
    route("api/v1/notifications", notifications.index, "notifications"),
    route("api/v1/notifications/clear", notifications.clear, "notifications_clear"),
    route("api/v1/notifications/<id>", notifications.detail, "notification"),
    route(
        "api/v1/notifications/<id>/dismiss",
        notifications.dismiss,
        "notification_dismiss",
    ),
    route("api/v2/search", search.search_v2, "search_v2"),
    route("api/v1/tags/<tag>", search.tag_detail, "tag"),
    route("api/v1/trends/tags", search.trends, "trends_tags"),
    route("api/v1/trends", search.trends, "trends"),
]
