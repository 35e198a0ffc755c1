from __future__ import annotations

import ipaddress

from django.conf import settings
from django.contrib import messages
from django.middleware.csrf import rotate_token
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts import services
from accounts.decorators import login_required
from accounts.domain import (
    ANONYMOUS,
    Credentials,
    InvalidCredentials,
    TooManyAttempts,
    UsernameTaken,
)
from accounts.forms import LoginForm, SignupForm
from config.http import safe_next


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


def _client_address(request) -> str:
    try:
        return str(ipaddress.ip_address(request.META.get("REMOTE_ADDR", "")))
    except ValueError:
        return "unknown"


def signup(request):
    if request.user.is_authenticated:
        return redirect("timeline:home")
    form = SignupForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            user = services.user_create(
                username=form.cleaned_data["username"],
                password=form.cleaned_data["password"],
            )
        except UsernameTaken:
            form.add_error("username", "That username is taken.")
        else:
            response = redirect("timeline:home")
            _signed_in(request, response, services.session_create(uid=user.id))
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
                client=_client_address(request),
            )
        except InvalidCredentials:
            form.add_error(None, "Wrong username or password.")
        except TooManyAttempts as error:
            minutes = -(-error.retry_after // 60)
            form.add_error(
                None,
                f"Too many failed attempts. Try again in {minutes} "
                f"minute{'s' if minutes != 1 else ''}.",
            )
            response = render(
                request, "accounts/login.html", {"form": form}, status=429
            )
            response["Retry-After"] = str(error.retry_after)
            return response
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


def _status(form) -> int:
    """400 for a form posted with errors, so tools and tests can tell."""
    return 400 if form.is_bound and form.errors else 200
