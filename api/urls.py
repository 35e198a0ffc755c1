"""The client API's routes (Mastodon's paths), and the OAuth endpoints.

Clients ask for a path with or without a trailing slash (Mastodon.py asks for
`/api/v1/instance/`; Rails matches both), so every route takes both (`route`).
"""

import re

from django.urls import re_path

from api.http import unrouted
from api.views import (
    accounts,
    apps,
    conversations,
    filters,
    instance,
    lists,
    markers,
    none_here,
    notifications,
    oauth,
    polls,
    reports,
    safety,
    search,
    statuses,
    streaming,
    suggestions,
    timelines,
)

_PARAMETERS = {
    "id": "[0-9]{1,19}",
    "quoting_id": "[0-9]{1,19}",
    "tag": "[^/]{1,100}",
    "group_key": "[a-z_]{1,30}-[0-9]{1,20}",
}


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
    # Accounts, the follow graph and safety (blocks, mutes, follow requests).
    route("api/v1/accounts/update_credentials", accounts.update, "update_credentials"),
    route("api/v1/accounts/lookup", accounts.lookup, "account_lookup"),
    route("api/v1/accounts/relationships", accounts.relationships, "relationships"),
    route(
        "api/v1/accounts/familiar_followers",
        accounts.familiar_followers,
        "familiar_followers",
    ),
    route("api/v1/accounts/search", accounts.search, "account_search"),
    route("api/v1/accounts/<id>", accounts.show, "account"),
    route("api/v1/accounts/<id>/followers", accounts.followers, "followers"),
    route("api/v1/accounts/<id>/following", accounts.following, "following"),
    route("api/v1/accounts/<id>/lists", lists.account_lists_view, "account_lists"),
    route("api/v1/accounts/<id>/follow", accounts.follow, "follow"),
    route("api/v1/accounts/<id>/unfollow", accounts.unfollow, "unfollow"),
    route("api/v1/accounts/<id>/block", safety.block, "block"),
    route("api/v1/accounts/<id>/unblock", safety.unblock, "unblock"),
    route("api/v1/accounts/<id>/mute", safety.mute, "mute"),
    route("api/v1/accounts/<id>/unmute", safety.unmute, "unmute"),
    route("api/v1/blocks", safety.blocked, "blocks"),
    route("api/v1/mutes", safety.muted, "mutes"),
    route("api/v1/follow_requests", safety.follow_requests, "follow_requests"),
    route(
        "api/v1/follow_requests/<id>/authorize", safety.authorize, "request_authorize"
    ),
    route("api/v1/follow_requests/<id>/reject", safety.reject, "request_reject"),
    # Reports to the operators (`timeline.reports`).
    route("api/v1/reports", reports.create, "reports"),
    # Who to follow, and dismissing one (`timeline.suggestions`).
    route("api/v2/suggestions", suggestions.v2, "suggestions_v2"),
    route("api/v1/suggestions", suggestions.v1, "suggestions_v1"),
    route("api/v1/suggestions/<id>", suggestions.dismiss, "suggestion_dismiss"),
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
    # Notifications and search (helper D).
    route("api/v1/notifications", notifications.index, "notifications"),
    route("api/v2/notifications", notifications.grouped_index, "notifications_v2"),
    route(
        "api/v2/notifications/unread_count",
        notifications.unread_count,
        "notifications_unread_count",
    ),
    route(
        "api/v2/notifications/<group_key>",
        notifications.group,
        "notification_group",
    ),
    route(
        "api/v2/notifications/<group_key>/accounts",
        notifications.group_accounts,
        "notification_group_accounts",
    ),
    route(
        "api/v2/notifications/<group_key>/dismiss",
        notifications.group_dismiss,
        "notification_group_dismiss",
    ),
    route("api/v1/notifications/clear", notifications.clear, "notifications_clear"),
    route(
        "api/v1/notifications/unread_count",
        notifications.unread_count_v1,
        "notifications_unread_count_v1",
    ),
    route("api/v1/notifications/<id>", notifications.detail, "notification"),
    route(
        "api/v1/notifications/<id>/dismiss",
        notifications.dismiss,
        "notification_dismiss",
    ),
    route("api/v2/search", search.search_v2, "search_v2"),
    route("api/v1/tags/<tag>", search.tag_detail, "tag"),
    route("api/v1/tags/<tag>/follow", search.tag_follow_view, "tag_follow"),
    route("api/v1/tags/<tag>/unfollow", search.tag_unfollow_view, "tag_unfollow"),
    route("api/v1/followed_tags", search.followed_tags_view, "followed_tags"),
    route("api/v1/trends/tags", search.trends, "trends_tags"),
    route("api/v1/trends", search.trends, "trends"),
    # Statuses and timelines (issue #13, helper C).
    route("api/v1/statuses", statuses.statuses, "statuses"),
    route(
        "api/v1/scheduled_statuses",
        statuses.scheduled_statuses,
        "scheduled_statuses",
    ),
    route(
        "api/v1/scheduled_statuses/<id>",
        statuses.scheduled_status,
        "scheduled_status",
    ),
    route("api/v1/statuses/<id>", statuses.status, "status"),
    route("api/v1/statuses/<id>/context", statuses.context, "status_context"),
    route("api/v1/statuses/<id>/history", statuses.history, "status_history"),
    route("api/v1/statuses/<id>/source", statuses.source, "status_source"),
    route("api/v1/statuses/<id>/favourite", statuses.favourite_view, "favourite"),
    route("api/v1/statuses/<id>/unfavourite", statuses.unfavourite_view, "unfavourite"),
    route("api/v1/statuses/<id>/bookmark", statuses.bookmark_view, "bookmark"),
    route("api/v1/statuses/<id>/unbookmark", statuses.unbookmark_view, "unbookmark"),
    route("api/v1/statuses/<id>/mute", statuses.mute_view, "status_mute"),
    route("api/v1/statuses/<id>/unmute", statuses.unmute_view, "status_unmute"),
    route("api/v1/statuses/<id>/pin", statuses.pin_view, "pin"),
    route("api/v1/statuses/<id>/unpin", statuses.unpin_view, "unpin"),
    # Polls: a poll's id is its status's (`api.views.polls`).
    route("api/v1/polls/<id>", polls.poll, "poll"),
    route("api/v1/polls/<id>/votes", polls.votes, "poll_votes"),
    route("api/v1/bookmarks", timelines.bookmarks_view, "bookmarks"),
    route("api/v1/favourites", timelines.favourites_view, "favourites"),
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
    route("api/v1/statuses/<id>/quotes", statuses.quotes_view, "status_quotes"),
    route(
        "api/v1/statuses/<id>/quotes/<quoting_id>/revoke",
        statuses.quote_revoke_view,
        "quote_revoke",
    ),
    route("api/v1/timelines/home", timelines.home_view, "timeline_home"),
    route("api/v1/timelines/public", timelines.public_view, "timeline_public"),
    route("api/v1/timelines/tag/<tag>", timelines.tag_view, "timeline_tag"),
    route(
        "api/v1/accounts/<id>/statuses",
        timelines.account_statuses_view,
        "account_statuses",
    ),
    # Where its user stopped reading, saved by an app (`markers`).
    route("api/v1/markers", markers.markers, "markers"),
    route("api/v1/conversations", conversations.conversations, "conversations"),
    route("api/v1/conversations/<id>", conversations.conversation, "conversation"),
    route(
        "api/v1/conversations/<id>/read",
        conversations.conversation_read,
        "conversation_read",
    ),
    # What a client reads at start-up and the site has none of (`none_here`).
    route("api/v1/custom_emojis", none_here.custom_emojis, "custom_emojis"),
    route("api/v1/filters", filters.filters_v1, "filters_v1"),
    route("api/v1/filters/<id>", filters.filter_v1, "filter_v1"),
    route("api/v2/filters", filters.filters_v2, "filters_v2"),
    route("api/v2/filters/keywords/<id>", filters.keyword, "filter_keyword"),
    route("api/v2/filters/statuses/<id>", filters.filter_status, "filter_status"),
    route("api/v2/filters/<id>", filters.filter_v2, "filter_v2"),
    route("api/v2/filters/<id>/keywords", filters.keywords, "filter_keywords"),
    route("api/v2/filters/<id>/statuses", filters.filter_statuses, "filter_statuses"),
    # Lists and their timelines (`lists`, `timelines.list_view`).
    route("api/v1/lists", lists.lists_view, "lists"),
    route("api/v1/lists/<id>", lists.list_view, "list"),
    route("api/v1/lists/<id>/accounts", lists.accounts_view, "list_accounts"),
    route("api/v1/timelines/list/<id>", timelines.list_view, "timeline_list"),
    route("api/v1/announcements", none_here.announcements, "announcements"),
    route("api/v1/preferences", none_here.preferences, "preferences"),
    # The streaming API over Server-Sent Events (`streaming`).
    route("api/v1/streaming/health", streaming.health, "streaming_health"),
    route("api/v1/streaming/user", streaming.user, "streaming_user"),
    route(
        "api/v1/streaming/user/notification",
        streaming.user_notification,
        "streaming_user_notification",
    ),
    route("api/v1/streaming/public", streaming.public, "streaming_public"),
    route("api/v1/streaming/public/local", streaming.public_local, "streaming_local"),
    route(
        "api/v1/streaming/public/remote", streaming.public_remote, "streaming_remote"
    ),
    route("api/v1/streaming/hashtag", streaming.hashtag, "streaming_hashtag"),
    route(
        "api/v1/streaming/hashtag/local",
        streaming.hashtag_local,
        "streaming_hashtag_local",
    ),
    route("api/v1/streaming/list", streaming.list_, "streaming_list"),
    route("api/v1/streaming/direct", streaming.direct, "streaming_direct"),
    # Last: any other API path answers a JSON 404.
    re_path(r"^api/", unrouted, name="unrouted"),
]
