from __future__ import annotations

from django import forms
from django.conf import settings

from config.forms import AccessibleForm
from timeline.services import normalize_text


class StatusForm(AccessibleForm):
    text = forms.CharField(
        label="What's happening?",
        strip=False,
        widget=forms.Textarea(attrs={"rows": 3, "data-counter": "compose-counter"}),
    )

    def clean_text(self) -> str:
        # Characters are Unicode code points (an emoji counts one), counted after the
        # same trimming the service applies, so the form and the service agree.
        text = normalize_text(self.cleaned_data["text"])
        limit = settings.STATUS_MAX_LENGTH
        if not text:
            raise forms.ValidationError("Write something first.")
        if len(text) > limit:
            raise forms.ValidationError(
                f"A status is at most {limit} characters (this one has {len(text)})."
            )
        return text
