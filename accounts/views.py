from __future__ import annotations

from django.conf import settings
from django.contrib import messages
from django.middleware.csrf import rotate_token
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from accounts import limits, selectors, services
from accounts.decorators import login_required
from accounts.domain import (
    ANONYMOUS,
    Credentials,
    InvalidCredentials,
    TooManyAttempts,
    UsernameTaken,
)
from accounts.forms import (
    AccountDeleteForm,
    DeviceForm,
    LoginForm,
    PasswordChangeForm,
    PrivacyForm,
    SignupForm,
)
from config.http import client_ip, safe_next, too_many_requests
from timeline import privacy as timeline_privacy
from timeline import selectors as timeline_selectors
from timeline import services as timeline_services


def _signed_in(request, response, credentials: Credentials) -> None:
    """Give the browser its login, and a new CSRF secret: a token planted before
    the login (a shared computer, a fixed cookie) must not outlive it."""
    rotate_token(request)
    response.set_cookie(
        settings.AUTH_COOKIE_NAME,
        credentials.cookie_value(),
        max_age=settings.AUTH_TOKEN_TTL_DAYS * 86400,
        httponly=True,
        samesite="Lax",
        secure=settings.AUTH_COOKIE_SECURE,
    )


def _user_agent(request) -> str:
    return request.META.get("HTTP_USER_AGENT", "")


def _too_many_attempts(form, error: TooManyAttempts, render_page):
    """The form's page again (`render_page()`) with the refusal said plainly: 429
    with Retry-After."""
    form.add_error(None, f"Too many failed attempts. Try again in {error.wait}.")
    return too_many_requests(render_page(), retry_after=error.retry_after)


def signup(request):
    if request.user.is_authenticated:
        return redirect("timeline:home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = services.user_create(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password"],
                limit=limits.signup(client_ip(request)),
            )
        except UsernameTaken:
            form.add_error("username", "That username is taken.")
        except TooManyAttempts as error:
            form.add_error(
                None,
                "Too many accounts were created from your network lately. "
                f"Try again in {error.wait}.",
            )
            response = render(request, "accounts/signup.html", {"form": form})
            return too_many_requests(response, retry_after=error.retry_after)
        else:
            response = redirect("timeline:home")
            credentials = services.session_create(
                uid=user.id,
                user_agent=_user_agent(request),
                client=client_ip(request),
            )
            _signed_in(request, response, credentials)
            messages.success(request, f"Welcome, {user.username}!")
            return response
    return render(request, "accounts/signup.html", {"form": form}, status=_status(form))


def login(request):
    if request.user.is_authenticated:
        return redirect(safe_next(request))
    form = LoginForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user, credentials = services.session_login(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password"],
                client=client_ip(request),
                user_agent=_user_agent(request),
            )
        except InvalidCredentials:
            form.add_error(None, "Wrong username or password.")
        except TooManyAttempts as error:
            context = {"form": form, "next": safe_next(request)}
            return _too_many_attempts(
                form, error, lambda: render(request, "accounts/login.html", context)
            )
        else:
            response = redirect(safe_next(request))
            _signed_in(request, response, credentials)
            return response
    context = {"form": form, "next": safe_next(request)}
    return render(request, "accounts/login.html", context, status=_status(form))


@require_POST
def logout(request):
    if request.credentials is not None:
        services.session_revoke(credentials=request.credentials)
    request.user = ANONYMOUS
    response = redirect("timeline:home")
    response.delete_cookie(settings.AUTH_COOKIE_NAME, samesite="Lax")
    messages.info(request, "You are logged out.")
    return response


@require_POST
@login_required
def logout_everywhere(request):
    services.session_revoke_all(uid=request.user.id)
    request.user = ANONYMOUS
    response = redirect("timeline:home")
    response.delete_cookie(settings.AUTH_COOKIE_NAME, samesite="Lax")
    messages.info(request, "You are logged out on every device.")
    return response


@require_safe
@login_required
def account_settings(request):
    form = PasswordChangeForm(username=request.user.username)
    return _settings_render(request, form)


@require_POST
@login_required
def password_change(request):
    """Change the password; every other device is logged out, this one stays."""
    form = PasswordChangeForm(request.POST, username=request.user.username)
    if form.is_valid():
        try:
            credentials = services.password_change(
                credentials=request.credentials,
                username=request.user.username,
                current_password=form.cleaned_data["current_password"],
                new_password=form.cleaned_data["new_password"],
                user_agent=_user_agent(request),
                client=client_ip(request),
            )
        except InvalidCredentials:
            form.add_error("current_password", "That is not your current password.")
        except TooManyAttempts as error:
            return _too_many_attempts(
                form, error, lambda: _settings_render(request, form)
            )
        else:
            response = redirect("accounts:settings")
            _signed_in(request, response, credentials)
            messages.success(
                request, "Password changed. Your other devices are logged out."
            )
            return response
    return _settings_render(request, form, status=_status(form))


@require_POST
@login_required
def device_logout(request):
    """Log out one of the viewer's own devices (from the settings page's list)."""
    form = DeviceForm(request.POST)
    if form.is_valid() and services.session_revoke_device(
        uid=request.user.id, device_id=form.cleaned_data["device"]
    ):
        messages.info(request, "That device is logged out.")
    else:
        messages.error(request, "That device was already logged out.")
    return redirect("accounts:settings")


@require_POST
@login_required
def privacy(request):
    """Make the account private (only approved followers see its statuses) or
    public again (`timeline.privacy`)."""
    form = PrivacyForm(request.POST)
    private = form.is_valid() and form.cleaned_data["private"]
    changed = timeline_privacy.account_privacy_set(user=request.user, private=private)
    if not changed:
        messages.info(request, "Nothing changed.")
    elif private:
        messages.success(
            request,
            "Your account is private: new followers must ask, and only your "
            "followers see your statuses.",
        )
    else:
        messages.success(request, "Your account is public: anyone sees your statuses.")
    return redirect("accounts:settings")


def _settings_render(request, form: PasswordChangeForm, status: int = 200):
    requests = timeline_selectors.follow_requests_count_queue(request.reads)
    devices = selectors.devices_get(
        reads=request.reads, credentials=request.credentials
    )
    context = {"form": form, "devices": devices, "requests": requests.value}
    return render(request, "accounts/settings.html", context, status=status)


@login_required
def account_delete(request):
    """Delete your account, once you confirm it with your password."""
    form = AccountDeleteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            timeline_services.account_delete(
                user=request.user,
                password=form.cleaned_data["password"],
                client=client_ip(request),
            )
        except InvalidCredentials:
            form.add_error("password", "Wrong password.")
        except TooManyAttempts as error:
            return _too_many_attempts(
                form, error, lambda: _delete_page(request, form, status=429)
            )
        else:
            request.user = ANONYMOUS
            response = redirect("timeline:home")
            response.delete_cookie(settings.AUTH_COOKIE_NAME, samesite="Lax")
            messages.info(request, "Your account is deleted.")
            return response
    return _delete_page(request, form, status=_status(form))


def _delete_page(request, form, *, status: int):
    context = {"form": form, "grace_days": settings.ACCOUNT_NAME_GRACE_DAYS}
    return render(request, "accounts/delete.html", context, status=status)


def _status(form) -> int:
    """400 for a form posted with errors, so tools and tests can tell."""
    return 400 if form.is_bound and form.errors else 200
