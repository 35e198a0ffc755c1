"""The site's routes: every client API route is reachable where its path says,
although the API's routes are tried only under their prefixes (config/urls.py)."""

from __future__ import annotations

from django.urls import URLPattern, resolve, reverse

from api import urls as api_urls


def test_every_api_route_resolves_to_its_view():
    routes = [p for p in api_urls.urlpatterns if isinstance(p, URLPattern)]
    assert len(routes) > 40
    for route in routes:
        if route.name == "unrouted":
            continue
        sample = {
            "id": "12",
            "tag": "cats",
            "group_key": "favourite-12",
            "quoting_id": "13",
        }
        kwargs = {name: sample[name] for name in route.pattern.regex.groupindex}
        path = reverse(f"api:{route.name}", kwargs=kwargs)
        for asked in (path, path.rstrip("/") + "/"):
            assert resolve(asked).view_name == f"api:{route.name}", asked


def test_other_api_paths_answer_the_api_404_and_pages_stay_pages():
    assert resolve("/api/v1/nothing/here").view_name == "api:unrouted"
    assert resolve("/u/api/").view_name == "timeline:profile"
    assert resolve("/u/oauth/followers/").view_name == "timeline:followers"
    assert resolve("/settings/profile/").view_name == "accounts:profile_settings"
