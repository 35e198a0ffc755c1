"""The client API's routes (Mastodon's paths), and the OAuth endpoints.

Clients ask for a path with or without a trailing slash (Mastodon.py asks for
`/api/v1/instance/`; Rails matches both), so every route takes both (`route`).
"""

import re

from django.urls import re_path

from api.views import accounts, instance, statuses, timelines

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
    # Statuses and timelines (issue #13, helper C).
    route("api/v1/statuses", statuses.statuses, "statuses"),
    route("api/v1/statuses/<id>", statuses.status, "status"),
    route("api/v1/statuses/<id>/context", statuses.context, "status_context"),
    route("api/v1/statuses/<id>/favourite", statuses.favourite_view, "favourite"),
    route("api/v1/statuses/<id>/unfavourite", statuses.unfavourite_view, "unfavourite"),
    route("api/v1/statuses/<id>/reblog", statuses.reblog_view, "reblog"),
    route("api/v1/statuses/<id>/unreblog", statuses.unreblog_view, "unreblog"),
    route(
        "api/v1/statuses/<id>/favourited_by",
        statuses.favourited_by_view,
        "favourited_by",
    ),
    route(
        "api/v1/statuses/<id>/reblogged_by", statuses.reblogged_by_view, "reblogged_by"
    ),
    route("api/v1/timelines/home", timelines.home_view, "timeline_home"),
    route("api/v1/timelines/public", timelines.public_view, "timeline_public"),
    route("api/v1/timelines/tag/<tag>", timelines.tag_view, "timeline_tag"),
    route(
        "api/v1/accounts/<id>/statuses",
        timelines.account_statuses_view,
        "account_statuses",
    ),
]
