from __future__ import annotations

from datetime import UTC, datetime

from django import forms
from django.conf import settings

from config.forms import AccessibleForm
from timeline.domain import (
    MAX_STATUS_ID,
    POLL_OPTIONS_MAX,
    normalize_spoiler,
    normalize_text,
    text_problem,
)
from timeline.filters import CONTEXT_LABELS, FilterRefused, keyword_clean
from timeline.lists import REPLIES_POLICIES, TITLE_MAX
from timeline.polls import PollRefused, poll_draft, poll_make
from timeline.reports import COMMENT_MAX

# How long a poll stays open (seconds), as Mastodon's menu offers.
POLL_DURATIONS = (
    ("300", "5 minutes"),
    ("1800", "30 minutes"),
    ("3600", "1 hour"),
    ("21600", "6 hours"),
    ("43200", "12 hours"),
    ("86400", "1 day"),
    ("259200", "3 days"),
    ("604800", "7 days"),
)


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
    # A direct message (`timeline.direct`): for the people it mentions only.
    direct = forms.BooleanField(
        label="Direct message: only the people you mention see it",
        required=False,
    )

    # A content warning (Mastodon's spoiler_text): shown in place of the text until
    # the reader opens it; it counts toward the length with the text. Posted only
    # while its tick box (`cw`, which shows the field) is ticked: unticked, a
    # warning typed before is left behind, with or without the page's script.
    cw = forms.BooleanField(label="Add a content warning", required=False)
    spoiler = forms.CharField(label="Content warning", required=False, strip=False)

    # Scheduled for later (`timeline.scheduled`): posted only while its tick box
    # (`schedule`) is ticked. The time as the browser's `datetime-local` field gives
    # it, in the writer's own time when the page's script says how far that is from
    # UTC (`tz`: minutes to add, as JavaScript's getTimezoneOffset() at that date),
    # else in UTC (the field says which).
    schedule = forms.BooleanField(label="Schedule for later", required=False)
    scheduled_at = forms.CharField(label="Post it at", required=False)
    tz = forms.IntegerField(required=False, min_value=-16 * 60, max_value=16 * 60)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["text"].widget.attrs["data-max"] = settings.STATUS_MAX_LENGTH

    def clean_scheduled_at(self) -> float | None:
        """When to post it (unix seconds), when scheduled; None for now."""
        if not self.cleaned_data.get("schedule"):
            return None
        raw = (self.cleaned_data.get("scheduled_at") or "").strip()
        try:
            local = datetime.fromisoformat(raw)
        except ValueError:
            raise forms.ValidationError("Pick a date and a time.") from None
        if local.tzinfo is not None:
            return local.timestamp()
        minutes = self.data.get("tz")
        offset = int(minutes) if minutes and minutes.lstrip("-").isdigit() else 0
        offset = max(-16 * 60, min(16 * 60, offset))
        return local.replace(tzinfo=UTC).timestamp() + offset * 60

    def clean_text(self) -> str:
        # As the service stores it; its length is checked with the warning (`clean`).
        return normalize_text(self.cleaned_data["text"])

    def clean_spoiler(self) -> str:
        if not self.cleaned_data.get("cw"):
            return ""
        return normalize_spoiler(self.cleaned_data.get("spoiler") or "")

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("direct") and cleaned.get("scheduled_at") is not None:
            self.add_error(
                "scheduled_at", "A direct message cannot be scheduled: post it now."
            )
        text = cleaned.get("text")
        if text is not None:
            # The service's own rule (timeline.domain), so the form and the service
            # agree: the text and its warning counted together, as the counter
            # counts them (a text too long alone is told its length with both).
            problem = text_problem(text, cleaned.get("spoiler") or "")
            if problem:
                self.add_error("text", problem)
        return cleaned


class ComposeForm(StatusForm):
    """The compose box's form: a status, and the poll it may ask (the reply and
    edit boxes ask none, and their pages build no poll fields: a page that shows
    a reply box builds its form on every request)."""

    # The status it quotes (`timeline.quotes`): the quote page's compose box sends it.
    quote_of = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=MAX_STATUS_ID - 1,
        widget=forms.HiddenInput,
    )

    # A poll (`timeline.polls`): posted only while its tick box (`poll`) is ticked,
    # from the options filled in, in order (blank ones are left out).
    poll = forms.BooleanField(label="Add a poll", required=False)
    # Checked with the poll (`_poll_clean`): a field error of its own would refuse
    # a status without a poll, and say nothing (the page shows the poll's errors).
    poll_expires = forms.CharField(label="Open for", required=False, initial="86400")
    poll_multiple = forms.BooleanField(label="Several choices", required=False)
    poll_hide_totals = forms.BooleanField(
        label="Hide the results until it closes", required=False
    )

    # The options, as many as a poll may have (POLL_OPTIONS_MAX).
    option1 = forms.CharField(label="Option 1", required=False, strip=False)
    option2 = forms.CharField(label="Option 2", required=False, strip=False)
    option3 = forms.CharField(label="Option 3", required=False, strip=False)
    option4 = forms.CharField(label="Option 4", required=False, strip=False)

    def _poll_clean(self, cleaned: dict) -> None:
        """The poll the form asks for (`cleaned["poll"]`: None for none), or its
        error on the `poll` field."""
        if not cleaned.get("poll"):
            cleaned["poll"] = None
            return
        options = [
            value
            for n in range(1, POLL_OPTIONS_MAX + 1)
            if (value := cleaned.get(f"option{n}") or "").strip()
        ]
        expires = cleaned.get("poll_expires") or "86400"
        if expires not in dict(POLL_DURATIONS):
            cleaned["poll"] = None
            self.add_error("poll", "Choose how long the poll stays open.")
            return
        # A scheduled status's poll is open its time from when it is posted.
        scheduled = cleaned.get("scheduled_at") is not None
        try:
            cleaned["poll"] = (poll_draft if scheduled else poll_make)(
                options,
                int(expires),
                multiple=bool(cleaned.get("poll_multiple")),
                hide_totals=bool(cleaned.get("poll_hide_totals")),
            )
        except PollRefused as error:
            self.add_error("poll", str(error))

    def clean(self):
        cleaned = super().clean()
        self._poll_clean(cleaned)
        return cleaned


# Every option a poll may have is a field of the compose box (its template shows
# POLL_OPTIONS_MAX of them).
assert {f"option{n}" for n in range(1, POLL_OPTIONS_MAX + 1)} <= set(
    ComposeForm.base_fields
)


# How long a keyword filter lasts (seconds; "": for good), as Mastodon's menu
# offers; an edit may keep the end it has ("keep").
FILTER_ENDS = (
    ("", "Never"),
    ("1800", "30 minutes"),
    ("3600", "1 hour"),
    ("21600", "6 hours"),
    ("43200", "12 hours"),
    ("86400", "1 day"),
    ("604800", "1 week"),
)


class FilterForm(AccessibleForm):
    """A keyword filter (`timeline.filters`): its keywords one per line."""

    title = forms.CharField(label="Title", max_length=100)
    keywords = forms.CharField(
        label="Keywords or phrases, one per line",
        widget=forms.Textarea(attrs={"rows": 4}),
    )
    whole_word = forms.BooleanField(
        label="Whole words only (\u201ccat\u201d does not match \u201ccategory\u201d)",
        required=False,
        initial=True,
    )
    context = forms.MultipleChoiceField(
        label="Filter in",
        choices=tuple(CONTEXT_LABELS.items()),
        widget=forms.CheckboxSelectMultiple,
        initial=["home", "public", "thread", "notifications"],
        error_messages={"required": "Choose where the filter applies."},
    )
    action = forms.ChoiceField(
        label="Then",
        choices=(
            ("warn", "Fold the status behind a warning with the filter's title"),
            ("hide", "Hide the status completely"),
        ),
        widget=forms.RadioSelect,
        initial="warn",
    )
    expires_in = forms.ChoiceField(label="Ends", choices=FILTER_ENDS, required=False)

    def __init__(
        self, *args, keep: str | None = None, statuses: bool = False, **kwargs
    ):
        super().__init__(*args, **kwargs)
        if keep is not None:
            # Editing: the end it has is the first choice, and the default.
            field = self.fields["expires_in"]
            field.choices = [("keep", f"As it is ({keep})"), *FILTER_ENDS]
            field.initial = "keep"
        if statuses:
            # A filter of statuses (added from an app) needs no keyword.
            self.fields["keywords"].required = False

    def clean_keywords(self) -> list[str]:
        words: list[str] = []
        for line in self.cleaned_data["keywords"].splitlines():
            if not line.strip():
                continue
            try:
                word = keyword_clean(line)
            except FilterRefused as error:
                raise forms.ValidationError(str(error)) from None
            if word.casefold() not in {w.casefold() for w in words}:
                words.append(word)
        if not words and self.fields["keywords"].required:
            raise forms.ValidationError("Write at least one keyword.")
        return words


class ListForm(AccessibleForm):
    """A list (`timeline.lists`): its title, which replies it shows, and whether
    its members' statuses leave the home (`exclusive`)."""

    title = forms.CharField(label="Title", max_length=TITLE_MAX)
    replies_policy = forms.ChoiceField(
        label="Show replies",
        choices=tuple(REPLIES_POLICIES.items()),
        initial="list",
    )
    exclusive = forms.BooleanField(
        label="Leave its members out of your home",
        required=False,
        help_text="Their statuses then show on this list's page only.",
    )


class _PlainText(forms.CharField):
    """Text whose line breaks count once: a browser sends a textarea's as CRLF."""

    def to_python(self, value):
        return super().to_python(value).replace("\r\n", "\n")


class ReportForm(AccessibleForm):
    """A report of an account (`timeline.reports`): why, and what to add. The
    statuses it flags are tick boxes the page writes out (`status` values)."""

    category = forms.ChoiceField(
        label="Why are you reporting them?",
        widget=forms.RadioSelect,
        choices=(
            ("spam", "Spam: ads, scams, the same junk again and again"),
            ("legal", "It is illegal where I am"),
            ("other", "Something else"),
        ),
        error_messages={"required": "Choose why you report them."},
    )
    comment = _PlainText(
        label="Anything the people who run this site should know? (optional)",
        required=False,
        strip=False,
        max_length=COMMENT_MAX,
        widget=forms.Textarea(
            attrs={
                "rows": 4,
                "data-counter": "report-counter",
                "data-max": COMMENT_MAX,
                "data-plain": "",
            }
        ),
    )
