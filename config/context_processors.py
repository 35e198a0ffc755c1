from functools import cache

from django.templatetags.static import static


@cache
def _assets() -> dict[str, str]:
    # The manifest cannot change under a running process, so each URL is looked up
    # once instead of three `{% static %}` lookups on every page.
    return {
        "css": static("css/site.css"),
        "js": static("js/site.js"),
        "favicon": static("favicon.svg"),
    }


def assets(request):
    """`assets.css`, `.js`, `.favicon`: the static files every page links."""
    return {"assets": _assets()}
