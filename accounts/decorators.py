"""`login_required` for Redis-backed users (Django's own needs the auth models)."""

from __future__ import annotations

from functools import wraps
from urllib.parse import urlencode

from django.conf import settings
from django.shortcuts import redirect

from config.reverse import url_for


def login_required(view):
    """Send anonymous visitors to the login page, then back here."""

    @wraps(view)
    def wrapper(request, *args, **kwargs):
        if not request.user.is_authenticated:
            return login_redirect(request)
        return view(request, *args, **kwargs)

    return wrapper


def login_redirect(request):
    """To the login page, then back here: for a view that reads its page with the
    viewer's check (one round trip) before it asks whether they are signed in."""
    # After logging in, come back here; a form's target cannot be revisited with a
    # GET, so an anonymous POST returns to the page it came from.
    back = (
        request.get_full_path() if request.method == "GET" else url_for("timeline:home")
    )
    query = urlencode({"next": back})
    return redirect(f"{url_for(settings.LOGIN_URL)}?{query}")
