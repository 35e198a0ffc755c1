"""People as HTML: the one place that renders a person's row, for every list of them.

A followers or following page lists up to 30 people, each with a Follow, Unfollow
or Requested button; included as a template each, their rows were most of the
page's time (docs/BENCHMARKS.md). Here a row is built in plain Python, as
`timeline.rendering` builds a status's. Nothing is cached: a row is made of the
person's name, display name and avatar as read with the page (an edit shows at
once) and of the viewer's state. Every value from a user goes through
`html.escape`; every button is a CSRF-protected POST form that returns to the page
it was pressed on (`next`), and works without JavaScript.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from html import escape

from jinja2 import pass_context
from markupsafe import Markup

from accounts.domain import User, avatar_url
from config.context_processors import csrf_input_html
from config.reverse import url_maker

# (route, button's classes, its accessible name before "@name", its text), by the
# viewer's state: following, requested, neither.
_UNFOLLOW = ("timeline:unfollow", "button small secondary", "Unfollow", "Unfollow")
_CANCEL = (
    "timeline:request_cancel",
    "button small secondary",
    "Requested: cancel your follow request to",
    "Requested",
)
_FOLLOW = ("timeline:follow", "button small", "Follow", "Follow")


def person_rows(
    people: Iterable[User],
    *,
    csrf_token: str = "",
    back: str = "",
    buttons: bool = False,
    following: Collection[int] = (),
    requested: Collection[int] = (),
    no_button: Collection[int] = (),
) -> Markup:
    """People as `<li class="person">` rows: avatar, display name and handle,
    linked to the profile; with `buttons`, each but those in `no_button` gets
    the viewer's Unfollow (`following`), Requested (`requested`) or Follow form,
    returning to `back` (the page's one CSRF token serves every form)."""
    url = url_maker()
    form_head = ""
    if buttons:
        nxt = f'<input type="hidden" name="next" value="{escape(back)}">'
        form_head = f"{csrf_input_html(csrf_token)}{nxt}"
    rows = []
    for person in people:
        username = escape(person.username)
        name = escape(person.name or person.username)
        href = escape(url("timeline:profile", person.username))
        src = escape(avatar_url(person.id, person.avatar, url))
        form = ""
        if buttons and person.id not in no_button:
            route, classes, label, text = (
                _UNFOLLOW
                if person.id in following
                else _CANCEL
                if person.id in requested
                else _FOLLOW
            )
            action = escape(url(route, person.username))
            form = (
                f'<form method="post" action="{action}" class="inline-form">'
                f'{form_head}<button type="submit" class="{classes}" '
                f'aria-label="{label} @{username}">{text}</button></form>'
            )
        rows.append(
            f'<li class="person"><a class="person-link" href="{href}">'
            f'<img class="avatar" src="{src}" alt="" width="40" height="40" '
            f'loading="lazy"> <span class="display-name">{name}</span> '
            f'<span class="handle">@{username}</span></a>{form}</li>'
        )
    return Markup("".join(rows))


@pass_context
def person_rows_tag(
    context,
    people: Iterable[User],
    *,
    back: str | None = None,
    buttons: bool = False,
    following: Collection[int] = (),
    requested: Collection[int] = (),
    no_button: Collection[int] = (),
) -> Markup:
    """`{{ person_rows(people, buttons=..., ...) }}` in templates, with the page's
    CSRF token; the forms return to `back`, by default the page itself."""
    token = str(context.get("csrf_token", "")) if buttons else ""
    if back is None:
        request = context.get("request")
        back = request.get_full_path() if request is not None else ""
    return person_rows(
        people,
        csrf_token=token,
        back=back,
        buttons=buttons,
        following=following,
        requested=requested,
        no_button=no_button,
    )
