"""Markers (Mastodon's `/api/v1/markers`): an app saves where its user stopped
reading their home and their notifications, and reads it back on another device.

The store is `timeline.markers`: the home marker is the status id an app saved;
the notifications marker is the site's own read mark, the one the notifications
page moves and the badge and the unread counts count from, so reading in an app
clears the badge and an app reads where the page left off. The mark is a place
(a group's); a notification's id is `place * ID_SPAN + actor`
(`api.views.notifications`), so a saved id marks its whole group read (the site
reads a group as one) and the marker answers the highest id that group's events
could have: every notification at or below it is read, every one above unread,
by the ids a client compares. A save that names an id above the newest
notification marks them all read and answers the newest group's; one below the
mark leaves it (the mark only rises), and answers the mark.
"""

from __future__ import annotations

import re

from api.http import (
    ApiError,
    Op,
    endpoint,
    iso,
    param,
    param_list,
    params,
    unprocessable,
)
from api.views.notifications import ID_SPAN
from timeline import markers as store
from timeline.domain import Marker
from timeline.selectors import markers_queue

# A form's `home[last_read_id]`: the timeline and the field.
_FORM_FIELD = re.compile(r"^([^\[\]]+)\[([^\[\]]+)\]$")
_ID = re.compile(r"^[0-9]{1,19}$")
_ID_MAX = 2**63 - 1  # Mastodon's ids are bigints


def _last_read_id(marker: Marker) -> str:
    """The marker's position as the client API's id (see the module doc)."""
    if marker.timeline != "notifications":
        return str(marker.position)
    if marker.position <= 0:
        return "0"  # nothing is read: every notification is above it
    return str(marker.position * ID_SPAN + ID_SPAN - 1)


def _entity(marker: Marker) -> dict:
    """Mastodon's Marker entity."""
    return {
        "last_read_id": _last_read_id(marker),
        "version": marker.version,
        "updated_at": iso(marker.at / 1000),
    }


def _answer(found: dict[str, Marker]) -> dict:
    return {timeline: _entity(marker) for timeline, marker in found.items()}


def markers_index(request) -> dict:
    """The viewer's markers of the timelines asked for (`timeline[]`) that were
    ever saved; an unknown timeline is not one (as Mastodon's). A read: it
    rides with the auth check and writes nothing."""
    asked = set(param_list(request.GET, "timeline")) & set(Marker.TIMELINES)
    found = markers_queue(request.reads) if asked else None
    if asked and (found is None or request.reads.proven_uid() is None):
        raise ApiError(401, "The access token is invalid")
    if found is None:
        return {}
    return _answer({t: m for t, m in found.value.items() if t in asked})


def _wanted(values) -> dict[str, int]:
    """The positions a save asks for, by timeline: `home[last_read_id]=…` in a
    form, `{"home": {"last_read_id": "…"}}` in JSON. A timeline the site has not
    is skipped, as Mastodon skips it (an app of a newer version may send one with
    its home's); 422 for a missing or malformed `last_read_id`."""
    given: dict[str, dict] = {}
    for key in values:
        value = values[key]
        if isinstance(value, dict):
            given.setdefault(key, {}).update(value)
        elif found := _FORM_FIELD.match(key):
            given.setdefault(found[1], {})[found[2]] = values.get(key)
    wanted: dict[str, int] = {}
    for timeline, fields in given.items():
        if timeline not in Marker.TIMELINES:
            continue
        raw = param(fields, "last_read_id")
        if raw is None or raw.strip() == "":
            raise unprocessable("Last read can't be blank")
        if not _ID.match(raw) or int(raw) > _ID_MAX:
            raise unprocessable("last_read_id is not an id")
        wanted[timeline] = int(raw)
    return wanted


def markers_create(request) -> dict:
    """Save the positions given, all in one atomic step; the markers saved."""
    wanted = _wanted(params(request))
    if not wanted:
        return {}  # nothing the site keeps was named: nothing saved (Mastodon's)
    notifications = wanted.get("notifications")
    saved = store.markers_save(
        user=request.user,
        home=wanted.get("home"),
        notifications=None if notifications is None else notifications // ID_SPAN,
    )
    return _answer(saved)


markers = endpoint(
    GET=Op(markers_index, scope="read:statuses"),
    POST=Op(markers_create, scope="write:statuses"),
)
