from functools import cache

from django.middleware.csrf import get_token
from django.templatetags.static import static
from django.utils.functional import SimpleLazyObject
from django.utils.html import format_html


@cache
def _assets() -> dict[str, str]:
    # The manifest cannot change under a running process, so each URL is looked up
    # once instead of three static lookups on every page.
    return {
        "css": static("css/site.css"),
        "js": static("js/site.js"),
        "favicon": static("favicon.svg"),
    }


def assets(request):
    """`assets.css`, `.js`, `.favicon`: the static files every page links."""
    return {"assets": _assets()}


def csrf(request):
    """`csrf_token` and `csrf_input`, made once per page however many forms use them.

    (The backend's own are lazy strings that mask a new token at every use.)
    """
    token = SimpleLazyObject(lambda: get_token(request))
    field = SimpleLazyObject(
        lambda: format_html(
            '<input type="hidden" name="csrfmiddlewaretoken" value="{}">', token
        )
    )
    return {"csrf_token": token, "csrf_input": field}
