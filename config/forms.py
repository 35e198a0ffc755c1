"""What every form of the site shares."""

from __future__ import annotations

from django import forms


class AccessibleForm(forms.Form):
    """Tie each field's errors to its input for screen readers.

    A field with errors gets `aria-invalid="true"` and `aria-describedby` pointing
    at the error list that `templates/form_fields.html` renders with that id.
    """

    def _post_clean(self):
        super()._post_clean()
        for name in self.errors:
            if name in self.fields:
                attrs = self.fields[name].widget.attrs
                attrs["aria-invalid"] = "true"
                attrs["aria-describedby"] = f"{self[name].auto_id}_error"
