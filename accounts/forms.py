from __future__ import annotations

from django import forms
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import FieldDoesNotExist, ValidationError
from django.core.validators import RegexValidator

from accounts.avatars import AVATAR_UPLOAD_MAX_BYTES
from accounts.domain import (
    DEVICE_ID_RE,
    USERNAME_MAX_LENGTH,
    USERNAME_RULE,
    username_problem,
)
from accounts.services import BIO_MAX_LENGTH, DISPLAY_NAME_MAX_LENGTH
from config.forms import AccessibleForm


def username_validator(username: str) -> None:
    """The one username rule (accounts.domain), as the service applies it too."""
    problem = username_problem(username)
    if problem:
        raise ValidationError(problem)


class _PasswordOwner:
    """What Django's UserAttributeSimilarityValidator reads of a user: the username,
    and `_meta.get_field` for its message (no model here, so the attribute's own
    name is used). A bare namespace made it crash on a password like the name."""

    class _meta:  # noqa: N801 (Django's name)
        @staticmethod
        def get_field(name: str):
            raise FieldDoesNotExist(name)

    def __init__(self, username: str):
        self.username = username


def _new_password_check(form, *, username: str, field: str, again: str) -> None:
    """The one rule for a new password (sign-up and change): typed the same twice,
    and accepted by Django's password validators (AUTH_PASSWORD_VALIDATORS)."""
    password, password2 = form.cleaned_data.get(field), form.cleaned_data.get(again)
    if password and password2 and password != password2:
        form.add_error(again, "The two passwords differ.")
    elif password:
        try:
            validate_password(password, user=_PasswordOwner(username))
        except ValidationError as error:
            form.add_error(field, error)


class SignupForm(AccessibleForm):
    username = forms.CharField(
        max_length=USERNAME_MAX_LENGTH,
        validators=[username_validator],
        help_text=USERNAME_RULE,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    password = forms.CharField(
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        strip=False,
    )
    password2 = forms.CharField(
        label="Password (again)",
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
        strip=False,
    )

    def clean(self):
        cleaned = super().clean()
        _new_password_check(
            self,
            username=cleaned.get("username") or "",
            field="password",
            again="password2",
        )
        return cleaned


class LoginForm(AccessibleForm):
    username = forms.CharField(
        max_length=USERNAME_MAX_LENGTH,
        widget=forms.TextInput(attrs={"autocomplete": "username", "autofocus": True}),
    )
    password = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


class PasswordChangeForm(AccessibleForm):
    """Nothing typed here is shown again: a password input renders no value."""

    current_password = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
    new_password = forms.CharField(
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )
    new_password2 = forms.CharField(
        label="New password (again)",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "new-password"}),
    )

    def __init__(self, *args, username: str, **kwargs):
        super().__init__(*args, **kwargs)
        self.username = username  # for the validator that refuses look-alikes

    def clean(self):
        cleaned = super().clean()
        _new_password_check(
            self, username=self.username, field="new_password", again="new_password2"
        )
        return cleaned


class DeviceForm(forms.Form):
    """A device to log out, named by its token's hash (never the token)."""

    device = forms.CharField(validators=[RegexValidator(DEVICE_ID_RE)])


class AccountDeleteForm(AccessibleForm):
    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )


class PrivacyForm(forms.Form):
    """The settings page's privacy toggle: a checkbox, absent when unticked; and
    `confirm=public`, the confirmation that going public asks for."""

    private = forms.BooleanField(required=False)
    confirm = forms.TypedChoiceField(
        choices=[("public", "public")],
        coerce=lambda value: value == "public",
        required=False,
        empty_value=False,
    )


class ProfileForm(AccessibleForm):
    """Display name and bio; the service has the last word on both (its message
    goes to the field, and what was typed stays in the form)."""

    name = forms.CharField(
        label="Display name",
        required=False,
        strip=False,
        max_length=DISPLAY_NAME_MAX_LENGTH * 4,  # the service counts code points
        help_text=f"Up to {DISPLAY_NAME_MAX_LENGTH} characters. Empty: your username.",
    )
    bio = forms.CharField(
        label="Bio",
        required=False,
        strip=False,
        max_length=BIO_MAX_LENGTH * 4,
        widget=forms.Textarea(attrs={"rows": 4}),
        help_text=f"Up to {BIO_MAX_LENGTH} characters.",
    )


class AvatarForm(AccessibleForm):
    avatar = forms.FileField(
        label="New avatar",
        help_text=(
            f"A PNG, JPEG, GIF or WebP image of at most "
            f"{AVATAR_UPLOAD_MAX_BYTES // (1024 * 1024)} MB; it is cropped to a square."
        ),
        widget=forms.FileInput(attrs={"accept": "image/*"}),
    )

    def clean_avatar(self):
        upload = self.cleaned_data["avatar"]
        if upload.size > AVATAR_UPLOAD_MAX_BYTES:
            raise ValidationError(
                f"That file is too large: an avatar is at most "
                f"{AVATAR_UPLOAD_MAX_BYTES // (1024 * 1024)} MB."
            )
        return upload
