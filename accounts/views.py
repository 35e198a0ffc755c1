from __future__ import annotations

import ipaddress

from django.conf import settings
from django.contrib import messages
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
from accounts.forms import AccountDeleteForm, LoginForm, SignupForm
from config.http import safe_next
from timeline import services as timeline_services


def _set_auth_cookie(response, credentials: Credentials) -> None:
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
            _set_auth_cookie(response, services.session_create(uid=user.id))
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
            _set_auth_cookie(response, credentials)
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


@login_required
def account_delete(request):
    """Delete your account, once you confirm it with your password."""
    form = AccountDeleteForm(request.POST or None)
    if request.method == "POST" and form.is_valid():
        try:
            timeline_services.account_delete(
                user=request.user,
                password=form.cleaned_data["password"],
                client=_client_address(request),
            )
        except InvalidCredentials:
            form.add_error("password", "Wrong password.")
        except TooManyAttempts as error:
            minutes = -(-error.retry_after // 60)
            form.add_error(
                None,
                f"Too many failed attempts. Try again in {minutes} "
                f"minute{'s' if minutes != 1 else ''}.",
            )
            response = _delete_page(request, form, status=429)
            response["Retry-After"] = str(error.retry_after)
            return response
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
