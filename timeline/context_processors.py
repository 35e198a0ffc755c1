import logging

from config.middleware import REDIS_OUTAGES

log = logging.getLogger(__name__)

# Past this many, the badge says "99+": the exact number says nothing more.
UNREAD_SHOWN_MAX = 99


def notifications(request):
    """`notifications_unread` in every template: the signed-in viewer's unread
    notification groups as the badge shows them ("3", "99+"), or "" for none.

    Read from the count the middleware queued in the request's first round trip,
    and only once that trip was made: a page that made none (an error page) shows
    no badge rather than paying a round trip for it.
    """
    unread = getattr(request, "notifications_unread", None)
    reads = getattr(request, "reads", None)
    if unread is None or reads is None or not (unread.done and reads.viewer.done):
        return {"notifications_unread": ""}
    try:
        if reads.proven_uid() != reads.claimed_uid:
            return {"notifications_unread": ""}
        count = unread.value
    except REDIS_OUTAGES as error:
        log.warning("notification count not shown: %r", error)
        return {"notifications_unread": ""}
    if count <= 0:
        return {"notifications_unread": ""}
    return {
        "notifications_unread": f"{UNREAD_SHOWN_MAX}+"
        if count > UNREAD_SHOWN_MAX
        else str(count)
    }
