from django.http import HttpResponse
from django.shortcuts import render


def csrf_failure(request, reason=""):
    """A refused form (missing or wrong CSRF token): a clear page, status 403."""
    return render(request, "403_csrf.html", status=403)


def healthz(request):
    """Liveness for load balancers, and the benchmark's trivial-view ceiling.

    It touches no Redis on purpose: the process is alive; `/` shows whether Redis is.
    """
    return HttpResponse("ok\n", content_type="text/plain")
