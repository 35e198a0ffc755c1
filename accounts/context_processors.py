import logging

from accounts.domain import ANONYMOUS
from config.middleware import REDIS_OUTAGES

log = logging.getLogger(__name__)


def viewer(request):
    """`viewer` in every template: the signed-in User, or the anonymous one.

    Read from the request's batch, not through the lazy `request.user`: a page's
    template asks for the viewer dozens of times and a lazy proxy costs each time.

    Every page reads the viewer with its own data before it renders (and answers 503
    when Redis is down), so only an error page (404, 403, a refused form) can be the
    first to ask. It must not need Redis: with Redis down it shows no one signed in,
    and the cookie is kept (the middleware clears only a cookie proven wrong).
    """
    reads = getattr(request, "reads", None)
    if reads is None:
        return {"viewer": ANONYMOUS}
    try:
        return {"viewer": reads.viewer.value}
    except REDIS_OUTAGES as error:
        log.warning(
            "%s %s rendered without its viewer: %r", request.method, request.path, error
        )
        return {"viewer": ANONYMOUS}
