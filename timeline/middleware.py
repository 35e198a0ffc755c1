"""The once-a-day "last seen" stamp that keeps a reader in the fan-out, and the
unread notification count every page of a signed-in viewer shows."""

from __future__ import annotations

import logging

from accounts.services import seen_day
from config.middleware import REDIS_OUTAGES
from timeline import direct, filters, selectors, services

log = logging.getLogger(__name__)


class LastSeenMiddleware:
    """After a signed-in person's page, stamp them as seen today if not yet.

    The stamp rode in the page's first round trip (`PageReads.seen_day`), so this
    costs nothing on every page but the first of a day. A reader back after
    FANOUT_ACTIVE_DAYS away (no stamp: fan-out skipped them) gets their home rebuilt.
    This is the one write a GET makes.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        reads = getattr(request, "reads", None)
        seen = reads.seen_day if reads is not None else None
        if seen is None or not (seen.done and reads.viewer.done):
            return response
        viewer = reads.viewer.value
        if viewer.is_authenticated and seen.value != seen_day():
            try:
                services.reader_seen(uid=viewer.id)
            except REDIS_OUTAGES as error:
                # Bookkeeping after a page that was served: the next page tries again.
                log.warning(
                    "last-seen stamp of user %s not written: %r", viewer.id, error
                )
        return response


class NotificationsCountMiddleware:
    """Queue the signed-in viewer's unread notification count, and that of their
    unread conversations, in the request's reads, right behind the auth check:
    they ride in the page's first round trip, and the navigation's badges
    (`timeline.context_processors`) cost no trip of their own.
    """

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        reads = getattr(request, "reads", None)
        # The API shows no badge: its requests read nothing for one.
        wanted = reads is not None and not getattr(request, "is_api", False)
        request.notifications_unread = (
            selectors.notifications_unread_queue(reads) if wanted else None
        )
        # The Messages badge: the viewer's unread conversations (`timeline.direct`).
        request.messages_unread = (
            direct.unread_count_queue(reads, reads.claimed_uid)
            if wanted and reads.claimed_uid is not None
            else None
        )
        return self.get_response(request)


class FiltersMiddleware:
    """Queue the signed-in viewer's keyword filters (`timeline.filters`) in the
    request's reads, behind the auth check: every page that shows statuses applies
    them, and the client API marks statuses with them (`filtered`), at no round
    trip of their own. Trusted only once the viewer is proven
    (`filters.viewer_filters`)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        reads = getattr(request, "reads", None)
        if reads is not None and reads.claimed_uid is not None:
            reads.filters = filters.filters_queue(reads, reads.claimed_uid)
        return self.get_response(request)
