"""`/api/v1/instance` and `/api/v2/instance`: what the server is and what it allows,
and how large it is: the accounts and statuses there are (`timeline.counts`: one
HMGET of the sum a fan-out worker writes every SITE_COUNTS_SECONDS, in the
request's one round trip), no other domain (no federation: Mastodon counts only
the others it knows), and the site's mark as a PNG (clients draw no SVG).
"""

from __future__ import annotations

from django.conf import settings

from api import entities, scopes
from api.http import NONE, Op, endpoint
from timeline.counts import site_counts_queue
from timeline.domain import (
    POLL_EXPIRES_MAX,
    POLL_EXPIRES_MIN,
    POLL_OPTION_MAX_CHARS,
    POLL_OPTIONS_MAX,
    URL_LENGTH,
)
from timeline.pins import PINS_MAX

# Mastodon's version we follow (what a client checks before using a feature), and
# the API version of 4.3's `api_versions`.
MASTODON_VERSION = "4.3.0"
VERSION = f"{MASTODON_VERSION} (compatible; Retwis-Django 1.0)"
API_VERSION = 2
TITLE = "Retwis"
DESCRIPTION = "Retwis on Django: a Twitter-style site where every post lives in Redis."
SOURCE_URL = "https://github.com/antirez/retwis"
# The favicon's drawing as a PNG, 400 x 400 (drawn once from static/favicon.svg).
THUMBNAIL = "thumbnail.png"


def _statuses_configuration() -> dict:
    return {
        "max_characters": settings.STATUS_MAX_LENGTH,
        "max_media_attachments": 0,
        "characters_reserved_per_url": URL_LENGTH,
    }


def _media_configuration() -> dict:
    return {
        "supported_mime_types": [],
        "image_size_limit": 0,
        "image_matrix_limit": 0,
        "video_size_limit": 0,
        "video_frame_rate_limit": 0,
        "video_matrix_limit": 0,
    }


def _polls_configuration() -> dict:
    """What a poll may be (`timeline.polls`): Mastodon's own limits."""
    return {
        "max_options": POLL_OPTIONS_MAX,
        "max_characters_per_option": POLL_OPTION_MAX_CHARS,
        "min_expiration": POLL_EXPIRES_MIN,
        "max_expiration": POLL_EXPIRES_MAX,
    }


def _streaming(request) -> str:
    """Where clients stream from (`/api/v1/streaming/...`), as Mastodon gives it: a
    WebSocket origin (`wss://host`), which SSE clients (Mastodon.py) turn into
    `https://host`; STREAMING_API_BASE when another origin serves the streams."""
    if settings.STREAMING_API_BASE:
        return settings.STREAMING_API_BASE
    scheme = "wss" if request.is_secure() else "ws"
    return f"{scheme}://{request.get_host()}"


def instance_v1(request) -> dict:
    host = request.get_host()
    counts = site_counts_queue(request.reads).value
    return {
        "uri": host,
        "title": TITLE,
        "short_description": DESCRIPTION,
        "description": DESCRIPTION,
        "email": "",
        "version": VERSION,
        "urls": {"streaming_api": _streaming(request)},
        "stats": {
            "user_count": counts.users,
            "status_count": counts.statuses,
            "domain_count": 0,
        },
        "thumbnail": entities.Urls.of(request).static(THUMBNAIL),
        "languages": ["en"],
        "registrations": True,
        "approval_required": False,
        "invites_enabled": False,
        "configuration": {
            "accounts": {"max_featured_tags": 0},
            "statuses": _statuses_configuration(),
            "media_attachments": _media_configuration(),
            "polls": _polls_configuration(),
        },
        "contact_account": None,
        "rules": [],
    }


def instance_v2(request) -> dict:
    urls = entities.Urls.of(request)
    counts = site_counts_queue(request.reads).value
    return {
        "domain": request.get_host(),
        "title": TITLE,
        "version": VERSION,
        "source_url": SOURCE_URL,
        "description": DESCRIPTION,
        "usage": {"users": {"active_month": counts.active_month}},
        "thumbnail": {"url": urls.static(THUMBNAIL)},
        "languages": ["en"],
        "configuration": {
            "urls": {"streaming": _streaming(request), "status": None},
            "vapid": {"public_key": ""},
            "accounts": {"max_featured_tags": 0, "max_pinned_statuses": PINS_MAX},
            "statuses": _statuses_configuration(),
            "media_attachments": _media_configuration(),
            "polls": _polls_configuration(),
            "translation": {"enabled": False},
        },
        "registrations": {
            "enabled": True,
            "approval_required": False,
            "message": None,
            "url": None,
        },
        "api_versions": {"mastodon": API_VERSION},
        "contact": {"email": "", "account": None},
        "rules": [],
        "scopes_supported": list(scopes.ALL),
    }


v1 = endpoint(GET=Op(instance_v1, auth=NONE))
v2 = endpoint(GET=Op(instance_v2, auth=NONE))
