from django.http import HttpResponse
from django.shortcuts import render

from config.middleware import bad_request_response


def bad_request(request, exception=None):
    """A request Django could not read (a malformed or oversized form): 400.

    Django's own handler runs the CSRF check first, which reads the form again and
    turns every such 400 into a 500.
    """
    return bad_request_response(request)


def csrf_failure(request, reason=""):
    """A refused form (missing or wrong CSRF token): a clear page, status 403."""
    return render(request, "403_csrf.html", status=403)


def healthz(request):
    """Liveness for load balancers, and the benchmark's trivial-view ceiling.

    It touches no Redis on purpose: the process is alive; `/` shows whether Redis is.
    """
    return HttpResponse("ok\n", content_type="text/plain")
