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
    path("settings/delete/", views.account_delete, name="account_delete"),
    path("settings/privacy/", views.privacy, name="privacy"),
]
