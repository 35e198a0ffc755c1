import logging

from config.middleware import REDIS_OUTAGES

log = logging.getLogger(__name__)

# Past this many, the badge says "99+": the exact number says nothing more.
UNREAD_SHOWN_MAX = 99


def notifications(request):
    """`notifications_unread` and `messages_unread` in every template: the
    signed-in viewer's unread notification groups and conversations of direct
    messages, as the badges show them ("3", "99+"), or "" for none.

    Read from the counts the middleware queued in the request's first round trip,
    and only once that trip was made: a page that made none (an error page) shows
    no badge rather than paying a round trip for it.
    """
    return {
        "notifications_unread": _badge(request, "notifications_unread"),
        "messages_unread": _badge(request, "messages_unread"),
    }


def _badge(request, name: str) -> str:
    unread = getattr(request, name, None)
    reads = getattr(request, "reads", None)
    if unread is None or reads is None or not (unread.done and reads.viewer.done):
        return ""
    try:
        if reads.proven_uid() != reads.claimed_uid:
            return ""
        count = unread.value
    except REDIS_OUTAGES as error:
        log.warning("%s count not shown: %r", name, error)
        return ""
    if count <= 0:
        return ""
    return f"{UNREAD_SHOWN_MAX}+" if count > UNREAD_SHOWN_MAX else str(count)
