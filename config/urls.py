from django.urls import include, path, re_path

from config import views

urlpatterns = [
    path("healthz/", views.healthz, name="healthz"),
    # The client API's some 50 routes are tried only for paths under its prefixes
    # (a lookahead: the routes keep their full paths, reversing ignores it): every
    # page's path was matched against all of them first, about 60 us a request
    # (tests/config/test_urls.py checks that every API route is under them).
    re_path(r"^(?=api/|oauth/|\.well-known/)", include("api.urls")),
    # The timeline's pages before the accounts' (the most read first: Django tries
    # routes in order); no route of one overlaps one of the other.
    path("", include("timeline.urls")),
    path("", include("accounts.urls")),
]

handler400 = "config.views.bad_request"
