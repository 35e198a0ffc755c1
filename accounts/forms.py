from __future__ import annotations

from types import SimpleNamespace

from django import forms
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import FieldDoesNotExist, ValidationError

from accounts.domain import USERNAME_MAX_LENGTH, USERNAME_RULE, username_problem
from config.forms import AccessibleForm


def username_validator(username: str) -> None:
    """The one username rule (accounts.domain), as the service applies it too."""
    problem = username_problem(username)
    if problem:
        raise ValidationError(problem)


class _Person(SimpleNamespace):
    """What Django's password validators read of the person signing up.

    UserAttributeSimilarityValidator names the similar attribute through
    `user._meta.get_field()`, a model's; there is no model here (a bare namespace
    made a password like the username a 500).
    """

    class _meta:  # noqa: N801 - the name Django reads
        @staticmethod
        def get_field(name: str):
            raise FieldDoesNotExist(name)


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
            person = _Person(username=cleaned.get("username") or "")
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
