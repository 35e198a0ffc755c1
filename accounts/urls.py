from django.urls import path

from accounts import views

app_name = "accounts"
urlpatterns = [
    path("signup/", views.signup, name="signup"),
    path("login/", views.login, name="login"),
    path("logout/", views.logout, name="logout"),
    path("logout/everywhere/", views.logout_everywhere, name="logout_everywhere"),
    path("settings/", views.account_settings, name="settings"),
    path("settings/password/", views.password_change, name="password_change"),
    path("settings/devices/logout/", views.device_logout, name="device_logout"),
    path("settings/apps/revoke/", views.app_revoke, name="app_revoke"),
    path("settings/delete/", views.account_delete, name="account_delete"),
    path("settings/privacy/", views.privacy, name="privacy"),
    path("settings/profile/", views.profile_settings, name="profile_settings"),
    path("settings/avatar/", views.avatar_upload, name="avatar_upload"),
    path("settings/avatar/remove/", views.avatar_remove, name="avatar_remove"),
    path("avatars/<int:uid>/", views.avatar_generated, name="avatar_generated"),
    # Beside the SVG's URL, not under it (`<uid>/<version>/` is an upload's).
    path(
        "avatars/<int:uid>.png",
        views.avatar_generated_png,
        name="avatar_generated_png",
    ),
    path("avatars/<int:uid>/<str:version>/", views.avatar, name="avatar"),
]
