from __future__ import annotations

from django import forms
from django.conf import settings

from config.forms import AccessibleForm
from timeline.domain import normalize_spoiler, normalize_text, text_problem


class StatusForm(AccessibleForm):
    text = forms.CharField(
        label="What's happening?",
        strip=False,
        widget=forms.Textarea(attrs={"rows": 3, "data-counter": "compose-counter"}),
    )

    unlisted = forms.BooleanField(
        label="Unlisted: not in everyone's posts nor on tag pages",
        required=False,
    )

    # A content warning (Mastodon's spoiler_text): shown in place of the text until
    # the reader opens it; it counts toward the length with the text. Posted only
    # while its tick box (`cw`, which shows the field) is ticked: unticked, a
    # warning typed before is left behind, with or without the page's script.
    cw = forms.BooleanField(label="Add a content warning", required=False)
    spoiler = forms.CharField(label="Content warning", required=False, strip=False)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["text"].widget.attrs["data-max"] = settings.STATUS_MAX_LENGTH

    def clean_text(self) -> str:
        # As the service stores it; its length is checked with the warning (`clean`).
        return normalize_text(self.cleaned_data["text"])

    def clean_spoiler(self) -> str:
        if not self.cleaned_data.get("cw"):
            return ""
        return normalize_spoiler(self.cleaned_data.get("spoiler") or "")

    def clean(self):
        cleaned = super().clean()
        text = cleaned.get("text")
        if text is not None:
            # The service's own rule (timeline.domain), so the form and the service
            # agree: the text and its warning counted together, as the counter
            # counts them (a text too long alone is told its length with both).
            problem = text_problem(text, cleaned.get("spoiler") or "")
            if problem:
                self.add_error("text", problem)
        return cleaned
