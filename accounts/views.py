from __future__ import annotations

import hashlib

from django.conf import settings
from django.contrib import messages
from django.http import Http404, HttpResponse, HttpResponseNotModified
from django.middleware.csrf import rotate_token
from django.shortcuts import redirect, render
from django.views.decorators.http import (
    require_http_methods,
    require_POST,
    require_safe,
)

from accounts import avatars, limits, selectors, services
from accounts.decorators import login_required
from accounts.domain import (
    ANONYMOUS,
    AVATAR_VERSION_RE,
    Credentials,
    InvalidAvatar,
    InvalidCredentials,
    InvalidProfile,
    TooManyAttempts,
    UsernameTaken,
)
from accounts.forms import (
    AccountDeleteForm,
    AvatarForm,
    DeviceForm,
    LoginForm,
    PasswordChangeForm,
    PrivacyForm,
    ProfileForm,
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


def _gone(request):
    """The answer to a signed-in user whose account was deleted while this request
    ran (a service raised InvalidCredentials): logged out, like any request whose
    session no longer proves anyone, and told why."""
    request.user = ANONYMOUS
    response = redirect(settings.LOGIN_URL)
    response.delete_cookie(settings.AUTH_COOKIE_NAME, samesite="Lax")
    messages.info(request, "This account is deleted: you are logged out.")
    return response


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
    # `next`: where to go then, on this site only (an app's consent page offers
    # another account: the login page, then back to it).
    response = redirect(safe_next(request))
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
def app_revoke(request):
    """Revoke an app's access token (from the settings page's list): it gets 401
    from its next request on."""
    form = DeviceForm(request.POST)
    if form.is_valid() and services.app_token_revoke_grant(
        uid=request.user.id, grant_id=form.cleaned_data["device"]
    ):
        messages.info(request, "That app's access is revoked.")
    else:
        messages.error(request, "That app's access was already revoked.")
    return redirect("accounts:settings")


@require_POST
@login_required
def privacy(request):
    """Make the account private (only approved followers see its statuses) or
    public again (`timeline.privacy`)."""
    form = PrivacyForm(request.POST)
    if not form.is_valid():  # only a hand-made POST: nothing is changed
        messages.error(request, "Nothing changed: the form was not understood.")
        return redirect("accounts:settings")
    private = form.cleaned_data["private"]
    if request.user.private and not private and not form.cleaned_data["confirm"]:
        # Going public shows everyone what was posted for followers only (the
        # privacy is the account's, as Twitter's protected accounts): asked first.
        return render(request, "accounts/privacy_confirm.html")
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
    apps = selectors.app_grants_queue(request.reads)
    devices = selectors.devices_get(
        reads=request.reads, credentials=request.credentials
    )
    context = {
        "form": form,
        "devices": devices,
        "apps": apps.value,
        "requests": requests.value,
    }
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


@require_http_methods(["GET", "HEAD", "POST"])
def profile_settings(request):
    """Edit the display name and bio; the avatar's forms post elsewhere."""
    if not request.user.is_authenticated:
        return login_required(profile_settings)(request)
    user = request.user
    if request.method != "POST":
        return _profile_render(request, form=_profile_form(user))
    form = ProfileForm(request.POST)
    if form.is_valid():
        try:
            services.profile_update(
                user=user, name=form.cleaned_data["name"], bio=form.cleaned_data["bio"]
            )
        except InvalidProfile as error:
            form.add_error(error.field, str(error))
        except InvalidCredentials:
            return _gone(request)
        else:
            messages.success(request, "Profile saved.")
            return redirect("accounts:profile_settings")
    return _profile_render(request, form=form, status=_status(form))


@require_POST
@login_required
def avatar_upload(request):
    """Replace the avatar with an uploaded image (re-encoded; see accounts.avatars)."""
    form = AvatarForm(request.POST, request.FILES)
    if form.is_valid():
        try:
            services.avatar_set(
                user=request.user,
                data=form.cleaned_data["avatar"].read(),
                limit=limits.post(request.user.id),
            )
        except InvalidAvatar as error:
            form.add_error("avatar", str(error))
        except InvalidCredentials:
            return _gone(request)
        except TooManyAttempts as error:
            form.add_error(
                "avatar",
                f"You are changing your avatar too often. Try again in {error.wait}.",
            )
            response = _profile_render(
                request, form=_profile_form(request.user), avatar_form=form
            )
            return too_many_requests(response, retry_after=error.retry_after)
        else:
            messages.success(request, "Avatar changed.")
            return redirect("accounts:profile_settings")
    return _profile_render(
        request, form=_profile_form(request.user), avatar_form=form, status=400
    )


def _profile_form(user) -> ProfileForm:
    return ProfileForm(initial={"name": user.name, "bio": user.bio})


@require_POST
@login_required
def avatar_remove(request):
    try:
        services.avatar_remove(user=request.user)
    except InvalidCredentials:
        return _gone(request)
    messages.success(request, "Avatar removed: you have the generated one again.")
    return redirect("accounts:profile_settings")


def _profile_render(request, *, form, avatar_form=None, status: int = 200):
    context = {"form": form, "avatar_form": avatar_form or AvatarForm()}
    return render(request, "accounts/profile_settings.html", context, status=status)


_YEAR = 31536000


@require_safe
def avatar(request, uid: int, version: str):
    """An uploaded avatar. Its URL names its version, so it never changes: cached
    for a year; a replaced version's URL answers 404 (pages link the new one)."""
    if not AVATAR_VERSION_RE.match(version):
        raise Http404("No such avatar")
    etag = f'"{version}"'
    if request.headers.get("If-None-Match") == etag:
        response = HttpResponseNotModified()
    else:
        image = selectors.avatar_get(uid=uid, version=version)
        if image is None:
            raise Http404("No such avatar")
        response = HttpResponse(image, content_type=avatars.CONTENT_TYPE)
    response["Cache-Control"] = f"public, max-age={_YEAR}, immutable"
    response["ETag"] = etag
    response.public = True  # the same for everyone (`accounts.middleware`)
    return response


@require_safe
def avatar_generated(request, uid: int):
    """Everyone's generated avatar, from the id alone (no read). Shorter caching:
    its URL is the one a page shows when the user has no upload."""
    response = _generated_response(
        request, avatars.identicon_svg(uid).encode(), "image/svg+xml"
    )
    # An SVG opened on its own runs no script and loads nothing.
    response["Content-Security-Policy"] = (
        "default-src 'none'; style-src 'unsafe-inline'"
    )
    return response


@require_safe
def avatar_generated_png(request, uid: int):
    """The same generated avatar as a PNG, for API clients, which draw no SVG."""
    return _generated_response(request, avatars.identicon_png(uid), "image/png")


def _generated_response(request, content: bytes, content_type: str):
    # Cached a day rather than a year: a generated avatar's URL has no version
    # (it is the one shown until an upload), so a client asks again now and then.
    etag = '"' + hashlib.sha256(content).hexdigest()[:16] + '"'
    if request.headers.get("If-None-Match") == etag:
        response = HttpResponseNotModified()
    else:
        response = HttpResponse(content, content_type=content_type)
    response["Cache-Control"] = "public, max-age=86400"
    response["ETag"] = etag
    response.public = True  # the same for everyone (`accounts.middleware`)
    return response
