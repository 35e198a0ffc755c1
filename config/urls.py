from django.urls import include, path

from config import views

urlpatterns = [
    path("healthz/", views.healthz, name="healthz"),
    path("", include("api.urls")),
    path("", include("accounts.urls")),
    path("", include("timeline.urls")),
]

handler400 = "config.views.bad_request"
