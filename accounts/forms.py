from __future__ import annotations

from types import SimpleNamespace

from django import forms
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import RegexValidator

from accounts.domain import USERNAME_MAX_LENGTH, USERNAME_RE, USERNAME_RULE
from config.forms import AccessibleForm

# The one username rule (accounts.domain), as the service applies it too.
username_validator = RegexValidator(USERNAME_RE, USERNAME_RULE)


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
        password, password2 = cleaned.get("password"), cleaned.get("password2")
        if password and password2 and password != password2:
            self.add_error("password2", "The two passwords differ.")
        elif password:
            person = SimpleNamespace(username=cleaned.get("username") or "")
            try:
                validate_password(password, user=person)
            except ValidationError as error:
                self.add_error("password", error)
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


class AccountDeleteForm(AccessibleForm):
    password = forms.CharField(
        label="Your password",
        strip=False,
        widget=forms.PasswordInput(attrs={"autocomplete": "current-password"}),
    )
