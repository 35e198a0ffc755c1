from accounts.domain import ANONYMOUS


def viewer(request):
    """`viewer` in every template: the signed-in User, or the anonymous one.

    Read from the request's batch, not through the lazy `request.user`: a page's
    template asks for the viewer dozens of times and a lazy proxy costs each time.
    """
    reads = getattr(request, "reads", None)
    return {"viewer": reads.viewer.value if reads is not None else ANONYMOUS}
