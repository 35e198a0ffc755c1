"""People as HTML: a person's row in every list of people, and a profile's head.

A followers or following page lists up to 30 people, each with a Follow, Unfollow
or Requested button; included as a template each, their rows were a third of the
page's time in-process (1.9 ms a page, 1.3 ms without). Here a row is built in
plain Python, as `timeline.rendering` builds a status's: its markup is memoized
(`_person`) by everything it shows, the person's name, display name and avatar as
read with the page (an edit shows at once: it is another key), and the viewer's
state and the page's CSRF field are added on each render. Every value from a user
goes through `html.escape`, and a display name sits in a `<bdi>` (its direction
controls cannot reorder the @handle beside it); every button is a CSRF-protected
POST form that returns to the page it was pressed on (`next`), and works without
JavaScript.

The profile's head (`profile_card`: face, badges, buttons, counts, people in
common) is built the same way, fresh on each view (a template took 110 us, this
30 us).
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from functools import lru_cache
from html import escape

from django.urls import get_script_prefix
from jinja2 import pass_context
from markupsafe import Markup

from accounts.domain import User, avatar_url
from config.context_processors import csrf_input_html
from config.jinja2 import plural
from config.reverse import url_maker
from timeline.domain import InCommon, Profile

# (route, button's classes, its accessible name before "@name", its text), by the
# viewer's state: following, requested, neither.
_BUTTONS = (
    ("timeline:unfollow", "button small secondary", "Unfollow", "Unfollow"),
    (
        "timeline:request_cancel",
        "button small secondary",
        "Requested: cancel your follow request to",
        "Requested",
    ),
    ("timeline:follow", "button small", "Follow", "Follow"),
)
_FOLLOWING, _REQUESTED, _NEITHER = range(3)


@lru_cache(maxsize=20_000)
def _person(
    prefix: str, uid: int, username: str, name: str, avatar: str
) -> tuple[str, tuple[tuple[str, str], ...], tuple[str, str]]:
    """A person's row without its forms' CSRF and `next` fields: its start, by the
    viewer's state (`_BUTTONS`) what goes before and after those fields, and the
    same for a suggestion's Dismiss form.
    A pure function of its arguments, every one read with the page (memoized, it
    cannot show a stale name or avatar), and of the script prefix the links are
    made with: the request's, `prefix` (part of the key for that reason)."""
    url = url_maker()
    handle = escape(username)
    link = (
        f'<li class="person"><a class="person-link" '
        f'href="{escape(url("timeline:profile", username))}">'
        f'<img class="avatar" src="{escape(avatar_url(uid, avatar, url))}" alt="" '
        f'width="40" height="40" loading="lazy"> '
        f'<bdi class="display-name">{escape(name or username)}</bdi> '
        f'<span class="handle">@{handle}</span></a>'
    )
    forms = tuple(
        (
            f'<form method="post" action="{escape(url(route, username))}" '
            'class="inline-form">',
            f'<button type="submit" class="{classes}" '
            f'aria-label="{label} @{handle}">{text}</button></form>',
        )
        for route, classes, label, text in _BUTTONS
    )
    dismiss = (
        f'<form method="post" '
        f'action="{escape(url("timeline:suggestion_dismiss", username))}" '
        'class="inline-form">',
        '<button type="submit" class="button small secondary" '
        f'aria-label="Dismiss @{handle}">Dismiss</button></form>',
    )
    return link, forms, dismiss


def person_rows(
    people: Iterable[User],
    *,
    csrf_token: str = "",
    back: str = "",
    buttons: bool = False,
    following: Collection[int] = (),
    requested: Collection[int] = (),
    no_button: Collection[int] = (),
    dismiss: bool = False,
) -> Markup:
    """People as `<li class="person">` rows: avatar, display name and handle,
    linked to the profile; with `buttons`, each but those in `no_button` gets
    the viewer's Unfollow (`following`), Requested (`requested`) or Follow form,
    and with `dismiss` a Dismiss form (suggestions), returning to `back` (the
    page's one CSRF token serves every form)."""
    prefix = get_script_prefix()
    form_head = ""
    if buttons:
        nxt = f'<input type="hidden" name="next" value="{escape(back)}">'
        form_head = f"{csrf_input_html(csrf_token)}{nxt}"
    rows = []
    for person in people:
        uid = person.id
        link, forms, dismissal = _person(
            prefix, uid, person.username, person.name, person.avatar
        )
        if buttons and uid not in no_button:
            start, end = forms[
                _FOLLOWING
                if uid in following
                else _REQUESTED
                if uid in requested
                else _NEITHER
            ]
            button = f"{start}{form_head}{end}"
            if dismiss:
                more = f"{dismissal[0]}{form_head}{dismissal[1]}"
                button = f'<div class="person-actions">{button}{more}</div>'
            rows.append(f"{link}{button}</li>")
        else:
            rows.append(f"{link}</li>")
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
    dismiss: bool = False,
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
        dismiss=dismiss,
    )


def _post_button(url, form_head: str, route: str, username: str, button: str) -> str:
    """A profile's one-button CSRF POST form acting on `username`."""
    action = escape(url(route, username))
    return f'<form method="post" action="{action}">{form_head}{button}</form>'


def _profile_actions(profile: Profile, url, form_head: str) -> str:
    """The signed-in viewer's buttons on someone else's profile: Unblock alone when
    they block the owner; else Follow (or Unfollow, Requested, Request to follow)
    and Mute or Unmute unless the owner blocks them, then Block."""
    name = profile.user.username
    secondary = '<button type="submit" class="button secondary"'
    if profile.viewer_blocks:
        return _post_button(
            url, form_head, "timeline:unblock", name, f"{secondary}>Unblock</button>"
        )
    forms = []
    if not profile.blocks_viewer:
        if profile.viewer_follows:
            follow = ("timeline:unfollow", f"{secondary}>Unfollow</button>")
        elif profile.viewer_requested:
            follow = (
                "timeline:request_cancel",
                f'{secondary} aria-label="Requested: cancel your follow request">'
                "Requested</button>",
            )
        else:
            text = "Request to follow" if profile.user.private else "Follow"
            follow = (
                "timeline:follow",
                f'<button type="submit" class="button">{text}</button>',
            )
        forms.append(_post_button(url, form_head, follow[0], name, follow[1]))
        mute = "unmute" if profile.viewer_mutes else "mute"
        forms.append(
            _post_button(
                url,
                form_head,
                f"timeline:{mute}",
                name,
                f"{secondary}>{mute.capitalize()}</button>",
            )
        )
    forms.append(
        _post_button(
            url,
            form_head,
            "timeline:block",
            name,
            '<button type="submit" class="button secondary danger">Block</button>',
        )
    )
    return "".join(forms)


def _in_common(common: InCommon, url) -> str:
    """'Followed by @a, @b and 3 others you follow (5 in all).'"""
    links = ", ".join(
        f'<a href="{escape(url("timeline:profile", person.username))}">'
        f"@{escape(person.username)}</a>"
        for person in common.shown
    )
    others = common.others
    if others and links:
        links += f" and {others:d} other{plural(others)}"
    elif others:
        links = f"{others:d} {'person' if others == 1 else 'people'}"
    among = (
        f"among the {common.scanned:d} you followed most recently"
        if common.partial
        else f"{common.count:d} in all"
    )
    return f'<p class="muted in-common">Followed by {links} you follow ({among}).</p>'


def profile_card(
    profile: Profile, *, signed_in: bool, own: bool, csrf_token: str = ""
) -> Markup:
    """A profile's head: avatar, names and badges, the signed-in viewer's buttons
    (`_profile_actions`), bio, the line that says why statuses are not shown,
    counts, people in common and when the owner joined (`own`: the viewer's own
    profile, with its edit and follow requests links)."""
    url = url_maker()
    user = profile.user
    username = escape(user.username)
    badges = ""
    if user.private:
        badges += ' <span class="badge" title="Private account">Private</span>'
    if profile.follows_viewer:
        badges += ' <span class="badge follows-you">Follows you</span>'
    parts = [
        '<section class="card"><div class="profile-head"><div class="profile-face">'
        f'<img class="avatar avatar-large" '
        f'src="{escape(avatar_url(user.id, user.avatar, url))}" alt="" width="96" '
        f'height="96"><div><h1 class="display-name">{escape(user.display_name)}</h1>'
        f'<p class="handle">@{username}{badges}</p></div></div>'
    ]
    if signed_in and not own:
        actions = _profile_actions(profile, url, csrf_input_html(csrf_token))
        parts.append(f'<div class="profile-actions">{actions}</div>')
    parts.append("</div>")
    if user.bio:
        parts.append(f'<p class="bio">{escape(user.bio)}</p>')
    if own:
        href = escape(url("accounts:profile_settings"))
        parts.append(f'<p><a href="{href}">Edit your profile</a></p>')
    if profile.viewer_blocks:
        parts.append(
            f'<p class="blocked-line">You blocked @{username}: you do not see each '
            "other's statuses, and neither of you can follow the other.</p>"
        )
    elif profile.blocks_viewer:
        parts.append(
            f'<p class="blocked-line">@{username} blocked you: you do not see each '
            "other's statuses.</p>"
        )
    elif profile.protected:
        waiting = (
            f" Your follow request is waiting for @{username}'s approval."
            if profile.viewer_requested
            else ""
        )
        parts.append(
            '<p class="lock-line">These statuses are protected: only approved '
            f"followers see them.{waiting}</p>"
        )
    elif profile.viewer_mutes:
        parts.append(
            f'<p class="muted">You muted @{username}: their statuses do not show on '
            "your home.</p>"
        )
    n, followers = profile.statuses, profile.followers
    parts.append(
        f'<ul class="counts"><li><strong>{n:d}</strong> status{plural(n, "es")}</li>'
        f'<li><a href="{escape(url("timeline:followers", user.username))}">'
        f"<strong>{followers:d}</strong> follower{plural(followers)}</a></li>"
        f'<li><a href="{escape(url("timeline:following", user.username))}">'
        f"<strong>{profile.following:d}</strong> following</a></li></ul>"
    )
    if profile.in_common is not None and profile.in_common.count:
        parts.append(_in_common(profile.in_common, url))
    parts.append(f'<p class="muted">Joined {user.created_at.strftime("%B %Y")}</p>')
    if own and (user.private or profile.requests):
        href = escape(url("timeline:follow_requests"))
        parts.append(
            f'<p class="muted"><a href="{href}">Follow requests '
            f"({profile.requests:d})</a></p>"
        )
    parts.append("</section>")
    return Markup("".join(parts))


@pass_context
def profile_card_tag(context, profile: Profile, own: bool) -> Markup:
    """`{{ profile_card(profile, own) }}` in templates, for the page's viewer."""
    viewer = context.get("viewer")
    signed_in = viewer is not None and viewer.is_authenticated
    token = str(context.get("csrf_token", "")) if signed_in and not own else ""
    return profile_card(profile, signed_in=signed_in, own=own, csrf_token=token)
