from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST

from accounts.decorators import login_required
from accounts.middleware import viewer_resolved
from accounts.selectors import user_id_by_username
from config.http import int_param, safe_next
from timeline import selectors, services
from timeline.domain import Busy, CannotFollowSelf, Forbidden, InvalidStatus, NotFound
from timeline.forms import StatusForm


def home(request, form: StatusForm | None = None):
    """The home timeline for a signed-in user; the welcome page for a visitor."""
    if request.credentials is None:
        return render(request, "timeline/welcome.html")
    viewer, page = selectors.home_page(
        credentials=request.credentials, max_id=int_param(request, "max_id")
    )
    viewer_resolved(request, viewer)
    if page is None:
        return render(request, "timeline/welcome.html")
    context = {"page": page, "form": form or StatusForm()}
    if not page.statuses and int_param(request, "max_id") is None:
        context["suggestions"] = selectors.suggestions_get(viewer_id=viewer.id)
    return render(request, "timeline/home.html", context, status=400 if form else 200)


@require_POST
@login_required
def post_status(request):
    form = StatusForm(request.POST)
    if not form.is_valid():
        return home(request, form=form)
    try:
        services.status_create(author=request.user, text=form.cleaned_data["text"])
    except InvalidStatus as error:
        form.add_error("text", str(error))
        return home(request, form=form)
    messages.success(request, "Posted.")
    return redirect(safe_next(request))


def global_timeline(request):
    viewer, page = selectors.global_page(
        credentials=request.credentials, max_id=int_param(request, "max_id")
    )
    viewer_resolved(request, viewer)
    return render(request, "timeline/global.html", {"page": page})


def status_detail(request, sid: int):
    viewer, status = selectors.status_get(credentials=request.credentials, sid=sid)
    viewer_resolved(request, viewer)
    if status is None:
        raise Http404("No such status")
    context = {"status": status, "statuses": [status]}
    return render(request, "timeline/status.html", context)


@require_POST
@login_required
def status_delete(request, sid: int):
    try:
        services.status_delete(user=request.user, sid=sid)
    except NotFound as error:
        raise Http404("No such status") from error
    except Forbidden as error:
        raise PermissionDenied(str(error)) from error
    messages.success(request, "Status deleted.")
    return redirect(safe_next(request, f"/u/{request.user.username}/"))


def profile(request, username: str):
    viewer, found = selectors.profile_get(
        credentials=request.credentials,
        username=username,
        max_id=int_param(request, "max_id"),
    )
    viewer_resolved(request, viewer)
    if found is None:
        raise Http404("No such user")
    own = viewer.is_authenticated and viewer.id == found.user.id
    context = {"profile": found, "page": found.page, "own": own}
    if own:
        context["form"] = StatusForm()
    return render(request, "timeline/profile.html", context)


def _followee_id(username: str) -> int:
    uid = user_id_by_username(username=username)
    if uid is None:
        raise Http404("No such user")
    return uid


def _change_follow(request, username: str, change):
    try:
        change(follower=request.user, followee_id=_followee_id(username))
    except (CannotFollowSelf, Busy) as error:
        messages.error(request, str(error))
    return redirect(safe_next(request, f"/u/{username}/"))


@require_POST
@login_required
def follow(request, username: str):
    return _change_follow(request, username, services.follow_create)


@require_POST
@login_required
def unfollow(request, username: str):
    return _change_follow(request, username, services.follow_delete)


def _people(request, username: str, relation: str, title: str):
    viewer, owner, page = selectors.people_page(
        credentials=request.credentials,
        username=username,
        relation=relation,
        cursor=int_param(request, "cursor"),
    )
    viewer_resolved(request, viewer)
    if owner is None:
        raise Http404("No such user")
    context = {"owner": owner, "people": page, "relation": relation, "title": title}
    return render(request, "timeline/people.html", context)


def followers(request, username: str):
    return _people(request, username, "followers", "Followers")


def following(request, username: str):
    return _people(request, username, "following", "Following")
