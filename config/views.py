from django.shortcuts import render


def csrf_failure(request, reason=""):
    """A refused form (missing or wrong CSRF token): a clear page, status 403."""
    return render(request, "403_csrf.html", status=403)
