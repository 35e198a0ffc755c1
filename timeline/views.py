from __future__ import annotations

from contextlib import suppress
from dataclasses import replace

from django.conf import settings
from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponseNotAllowed, JsonResponse
from django.shortcuts import redirect, render
from django.views.decorators.http import require_POST, require_safe

from accounts import limits
from accounts.decorators import login_redirect, login_required
from accounts.domain import TooManyAttempts
from accounts.selectors import user_id_by_username
from config.http import int_param, safe_next, too_many_requests
from config.reverse import url_for
from timeline import (
    blocks,
    bookmarks,
    conversations,
    direct,
    edits,
    filters,
    lists,
    notifications,
    pins,
    polls,
    privacy,
    quotes,
    reports,
    richtext,
    scheduled,
    selectors,
    services,
    social,
    suggestions,
    tagfollows,
)
from timeline.domain import (
    Blocked,
    BookmarksFull,
    Busy,
    CannotBlock,
    CannotFollowSelf,
    CannotPin,
    FollowRequestsFull,
    Forbidden,
    InvalidStatus,
    NotFound,
    Page,
    Status,
)
from timeline.forms import ComposeForm, FilterForm, ListForm, ReportForm, StatusForm
from timeline.richtext import tag_wanted
from timeline.scheduled import ScheduleRefused
from timeline.trends import trends_queue


def _filtered(request, page: Page, context: str) -> Page:
    """The page as the viewer's keyword filters of `context` show it: without the
    statuses a `hide` filter matches, the others' folded (`timeline.filters`)."""
    found = filters.viewer_filters(request.reads)
    if not found.filters:
        return page
    kept, folded = found.fold(page.statuses, request.reads.proven_uid(), context)
    hidden = len(page.statuses) - len(kept)
    return replace(page, statuses=kept, filtered=folded, hidden=hidden)


def home(request, form: ComposeForm | None = None, status: int = 400):
    """The home timeline for a signed-in user; the welcome page for a visitor.

    With `form`, the home again after a compose error, at the compose box's target:
    its `next` stays the page the status was written on, not the form's target, and
    the rows' forms and the pager lead from the home (`page_path`), not from that
    POST-only address. Without, the empty compose box needs no form
    (`timeline/_compose.html`).
    """
    found = selectors.home_get(reads=request.reads, max_id=int_param(request, "max_id"))
    if found is None:
        return render(request, "timeline/welcome.html")
    back = safe_next(request, url_for("timeline:home")) if form else request.path
    context = {
        "page": _filtered(request, found.page, "home"),
        "suggestions": found.suggestions,
        "catching_up": found.catching_up,
        "listed": found.listed,
        "form": form,
        "compose_next": back,
    }
    if form:
        context["page_path"] = url_for("timeline:home")
    code = status if form else 200
    return render(request, "timeline/home.html", context, status=code)


@require_POST
@login_required
def post_status(request):
    """Post from a compose box; after an error, show it again with what was typed."""
    form = ComposeForm(request.POST)
    later = None
    if form.is_valid():
        text = richtext.local_handles(form.cleaned_data["text"], request.get_host())
        quote_of = form.cleaned_data["quote_of"]
        try:
            if quote_of is not None:
                if form.cleaned_data["scheduled_at"] is not None:
                    raise ScheduleRefused("A quote cannot be scheduled: post it now.")
                quotes.status_quote(
                    author=request.user,
                    sid=quote_of,
                    text=text,
                    limit=limits.post(request.user.id),
                    unlisted=form.cleaned_data["unlisted"],
                    spoiler=form.cleaned_data["spoiler"],
                    direct=form.cleaned_data["direct"],
                    poll=form.cleaned_data["poll"],
                )
            elif form.cleaned_data["scheduled_at"] is not None:
                later = scheduled.status_schedule(
                    author=request.user,
                    text=text,
                    at=form.cleaned_data["scheduled_at"],
                    limit=limits.post(request.user.id),
                    unlisted=form.cleaned_data["unlisted"],
                    spoiler=form.cleaned_data["spoiler"],
                    poll=form.cleaned_data["poll"],
                )
            else:
                services.status_create(
                    author=request.user,
                    text=text,
                    limit=limits.post(request.user.id),
                    unlisted=form.cleaned_data["unlisted"],
                    spoiler=form.cleaned_data["spoiler"],
                    direct=form.cleaned_data["direct"],
                    poll=form.cleaned_data["poll"],
                )
        except ScheduleRefused as error:
            form.add_error("scheduled_at", str(error))
        except (InvalidStatus, Forbidden) as error:
            form.add_error("text", str(error))
        except NotFound:
            form.add_error("text", "The post you quote is gone, or hidden from you.")
        except TooManyAttempts as error:
            _too_fast(form, error)
            # A quote's page again, its quote still attached to the text typed.
            response = _quote_page(
                request, form.data.get("quote_of"), form=form, code=429
            ) or home(request, form=form, status=429)
            return too_many_requests(response, retry_after=error.retry_after)
    if form.errors:
        quoted = _quote_page(request, form.data.get("quote_of"), form=form, code=400)
        return quoted or home(request, form=form)
    if later is not None:
        messages.success(request, f"Scheduled: it will be posted on {later.at_label}.")
        return redirect(url_for("timeline:scheduled"))
    messages.success(request, "Posted.")
    return redirect(safe_next(request))


@login_required
@require_safe
def status_quote(request, sid: int):
    """The compose box with the status it quotes shown above it (the post goes to
    the compose box's own address, `post_status`, with the quoted id)."""
    response = _quote_page(request, str(sid))
    if response is None:
        raise Http404("No such status")
    return response


def _quote_page(request, sid: str | None, form: ComposeForm | None = None, code=200):
    """The quote page of status `sid` (a repost's: its original's), with `form`
    after an error; None when the status is gone or hidden from the viewer."""
    if not sid or not sid.isdigit():
        return None
    found = selectors.status_page_get(reads=request.reads, sid=int(sid))
    if found is None:
        return None
    context = {
        "quoted": found,
        "quote_of": found.statuses[0].original_id,
        "form": form,
        "compose_next": url_for("timeline:home"),
    }
    return render(request, "timeline/quote.html", context, status=code)


@login_required
@require_safe
def scheduled_page(request):
    """The viewer's statuses waiting for their time, soonest first."""
    waiting = scheduled.scheduled_list(user=request.user)
    return render(request, "timeline/scheduled.html", {"waiting": waiting})


def _filter_keywords(
    form: FilterForm, current: filters.Filter | None
) -> list[filters.KeywordChange]:
    """A filter's keywords as the form lists them, as changes of those it has: a
    keyword kept (any case) keeps its id, and its own whole-word choice unless the
    box was changed (one box cannot show keywords that differ); the others go, the
    new ones come, with the box's choice."""
    words = form.cleaned_data["keywords"]
    whole_word = form.cleaned_data["whole_word"]
    changed = "whole_word" in form.changed_data
    have = {k.keyword.casefold(): k for k in current.keywords} if current else {}
    changes = [
        filters.KeywordChange(
            word,
            whole_word if changed else have[word.casefold()].whole_word,
            id=have[word.casefold()].id,
        )
        if word.casefold() in have
        else filters.KeywordChange(word, whole_word)
        for word in words
    ]
    wanted = {word.casefold() for word in words}
    changes += [
        filters.KeywordChange(id=k.id, delete=True)
        for key, k in have.items()
        if key not in wanted
    ]
    return changes


def _filters_render(request, form: FilterForm | None = None, code: int = 200):
    # As the request's first round trip read them (nothing was written since).
    found = filters.viewer_filters(request.reads)
    context = {"filters": found.filters, "form": form or FilterForm()}
    return render(request, "timeline/filters.html", context, status=code)


@login_required
@require_safe
def filters_page(request):
    """The viewer's keyword filters, and a form for a new one."""
    return _filters_render(request)


def _filter_saved(request, form: FilterForm, save) -> bool:
    """Save a valid form through `save(...)`; a refusal goes on the form."""
    if not form.is_valid():
        return False
    data = form.cleaned_data
    ends = data["expires_in"]
    try:
        save(
            title=data["title"],
            context=data["context"],
            action=data["action"],
            **({} if ends == "keep" else {"expires": filters.expiry(int(ends or 0))}),
        )
    except filters.FilterRefused as error:
        form.add_error(None, str(error))
        return False
    return True


@require_POST
@login_required
def filter_new(request):
    """Make a keyword filter; after an error, the page again with what was typed."""
    form = FilterForm(request.POST)

    def save(**fields) -> None:
        filters.filter_create(
            uid=request.user.id,
            keywords=_filter_keywords(form, None),
            **fields,
        )

    if not _filter_saved(request, form, save):
        return _filters_render(request, form, code=400)
    messages.success(request, "Filter saved.")
    return redirect(url_for("timeline:filters"))


@login_required
def filter_edit(request, fid: int):
    """Change one of the viewer's filters (GET: its form; POST: save it)."""
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponseNotAllowed(["GET", "HEAD", "POST"])
    current = filters.viewer_filters(request.reads).get(fid)
    if current is None:
        raise Http404("No such filter")
    # The form as the filter is: shown by a GET, and what a POST's changes are
    # measured against (the whole-word box).
    initial = {
        "title": current.title,
        "keywords": current.keywords_text,
        "whole_word": all(k.whole_word for k in current.keywords),
        "context": list(current.context),
        "action": current.action,
    }
    shape = {"keep": current.ends_label, "statuses": bool(current.statuses)}
    if request.method != "POST":
        form = FilterForm(initial=initial, **shape)
        return render(
            request, "timeline/filter_edit.html", {"form": form, "filter": current}
        )
    form = FilterForm(request.POST, initial=initial, **shape)

    def save(**fields) -> None:
        filters.filter_update(
            uid=request.user.id,
            fid=fid,
            keywords=_filter_keywords(form, current),
            **fields,
        )

    try:
        saved = _filter_saved(request, form, save)
    except NotFound:
        messages.error(request, "That filter was deleted meanwhile.")
        return redirect(url_for("timeline:filters"))
    if not saved:
        context = {"form": form, "filter": current}
        return render(request, "timeline/filter_edit.html", context, status=400)
    messages.success(request, "Filter saved.")
    return redirect(url_for("timeline:filters"))


@require_POST
@login_required
def filter_delete(request, fid: int):
    # One gone already (NotFound): what was asked is done.
    with suppress(NotFound):
        filters.filter_delete(uid=request.user.id, fid=fid)
    messages.success(request, "Filter deleted.")
    return redirect(url_for("timeline:filters"))


def _lists_render(
    request,
    form: ListForm | None = None,
    edited: tuple[int, ListForm] | None = None,
    code: int = 200,
):
    """The lists page: each list with its rename form (`edited`: the one whose
    change failed, bound, with what was typed), and a form for a new one."""
    found = lists.lists_get(uid=request.user.id)
    rows = [
        (
            entry,
            edited[1]
            if edited is not None and edited[0] == entry.id
            else ListForm(
                prefix=f"list{entry.id}",
                initial={
                    "title": entry.title,
                    "replies_policy": entry.replies_policy,
                    "exclusive": entry.exclusive,
                },
            ),
        )
        for entry in found
    ]
    context = {"rows": rows, "form": form or ListForm(), "lists_max": lists.LISTS_MAX}
    return render(request, "timeline/lists.html", context, status=code)


@login_required
@require_safe
def lists_page(request):
    """The viewer's lists, and a form for a new one."""
    return _lists_render(request)


@require_POST
@login_required
def list_new(request):
    """Make a list; after an error, the page again with what was typed."""
    form = ListForm(request.POST)
    if form.is_valid():
        try:
            made = lists.list_create(
                uid=request.user.id,
                title=form.cleaned_data["title"],
                replies_policy=form.cleaned_data["replies_policy"],
                exclusive=form.cleaned_data["exclusive"],
            )
        except lists.ListRefused as error:
            form.add_error(None, str(error))
    if form.errors:
        return _lists_render(request, form=form, code=400)
    messages.success(request, f"List “{made.title}” made.")
    return redirect(url_for("timeline:lists"))


@require_POST
@login_required
def list_edit(request, lid: int):
    """Rename a list or change its replies; after an error, the lists page with
    what was typed in that list's form."""
    form = ListForm(request.POST, prefix=f"list{lid}")
    if form.is_valid():
        try:
            lists.list_update(
                uid=request.user.id,
                lid=lid,
                title=form.cleaned_data["title"],
                replies_policy=form.cleaned_data["replies_policy"],
                exclusive=form.cleaned_data["exclusive"],
            )
        except lists.ListRefused as error:
            form.add_error(None, str(error))
        except NotFound:
            messages.error(request, "That list was deleted meanwhile.")
            return redirect(url_for("timeline:lists"))
    if form.errors:
        return _lists_render(request, edited=(lid, form), code=400)
    messages.success(request, "List saved.")
    return redirect(safe_next(request, url_for("timeline:lists")))


@require_POST
@login_required
def list_delete(request, lid: int):
    # One gone already (NotFound): what was asked is done.
    with suppress(NotFound):
        lists.list_delete(uid=request.user.id, lid=lid)
    messages.success(request, "List deleted.")
    return redirect(url_for("timeline:lists"))


@require_safe
def list_detail(request, lid: int):
    """One of the viewer's lists: its statuses (the home's rules, its replies
    policy) and its members, each with a button to take them off."""
    found = selectors.list_page(
        reads=request.reads, lid=lid, max_id=int_param(request, "max_id")
    )
    if found is None:
        if request.reads.proven_uid() is None:
            return login_required(list_detail)(request, lid)
        raise Http404("No such list")
    context = {
        "found": found,
        "list": found.list,
        "page": _filtered(request, found.page, "home"),
    }
    return render(request, "timeline/list.html", context)


@require_POST
@login_required
def list_member_remove(request, lid: int, uid: int):
    """Take someone off one of the viewer's lists."""
    try:
        lists.members_remove(uid=request.user.id, lid=lid, member_ids=[uid])
    except NotFound as error:
        raise Http404("No such list") from error
    messages.success(request, "Taken off the list.")
    return redirect(url_for("timeline:list_detail", lid))


@require_POST
@login_required
def list_member_add(request, username: str):
    """Add the person whose profile this is to one of the viewer's lists (the
    profile's form: only shown while the viewer follows them)."""
    member_id = user_id_by_username(username=username)
    if member_id is None:
        raise Http404("No such user")
    back = safe_next(request, url_for("timeline:profile", username))
    raw = request.POST.get("list", "")
    if not raw.isdecimal() or len(raw) > 12:
        messages.error(request, "Choose a list.")
        return redirect(back)
    lid = int(raw)
    try:
        lists.members_add(uid=request.user.id, lid=lid, member_ids=[member_id])
    except lists.ListRefused as error:
        messages.error(request, f"Not added: {error}")
        return redirect(back)
    except NotFound:
        messages.error(request, "That list was deleted meanwhile.")
        return redirect(back)
    messages.success(request, f"Added @{username} to the list.")
    return redirect(back)


@require_POST
@login_required
def scheduled_cancel(request, n: int):
    """Cancel one of the viewer's scheduled statuses: it will not be posted."""
    try:
        cancelled = scheduled.scheduled_cancel(user=request.user, n=n)
    except ScheduleRefused as error:
        messages.error(request, f"Not cancelled: {error}")
        return redirect(url_for("timeline:scheduled"))
    if cancelled:
        messages.success(request, "Cancelled: it will not be posted.")
    else:
        messages.info(request, "It was not waiting any more (posted, or cancelled).")
    return redirect(url_for("timeline:scheduled"))


def _too_fast(form: StatusForm, error: TooManyAttempts, verb: str = "post") -> None:
    """The posting budget refused a compose, reply or edit box: say when to try
    again, under what was typed (kept)."""
    form.add_error(
        "text",
        f"You are posting too fast. Your text is kept here: {verb} it in {error.wait}.",
    )


def global_timeline(request):
    trends = trends_queue(request.reads)  # read with the page's first trip
    page = selectors.global_page(
        reads=request.reads, max_id=int_param(request, "max_id")
    )
    context = {"page": _filtered(request, page, "public"), "trends": trends.value}
    return render(request, "timeline/global.html", context)


def tag(request, tag: str):
    wanted = tag_wanted(tag)
    if wanted is None:
        raise Http404("No such tag")
    # Whether the viewer follows it rides in the page's first round trip.
    following = tagfollows.viewer_follows_queue(request.reads, wanted)
    page = selectors.tag_page(
        reads=request.reads, tag=wanted, max_id=int_param(request, "max_id")
    )
    if page is None:
        raise Http404("No such tag")
    context = {
        "page": _filtered(request, page, "public"),
        "tag": wanted,
        "following": following(),
    }
    return render(request, "timeline/tag.html", context)


def _change_tag_follow(request, tag: str, change, done: str):
    """Follow or unfollow a tag, from the follow budget; back to where the button
    was (the tag's page by default)."""
    wanted = tag_wanted(tag)
    if wanted is None:
        raise Http404("No such tag")
    back = safe_next(request, url_for("timeline:tag", wanted))
    try:
        change(uid=request.user.id, tag=wanted, limit=limits.follow(request.user.id))
    except NotFound as error:
        raise Http404("No such tag") from error
    except tagfollows.TagFollowRefused as error:
        messages.error(request, f"Not followed: {error}")
    except TooManyAttempts as error:
        return _slow_down(
            request,
            error,
            reason="You have followed and unfollowed too much lately.",
            back=back,
        )
    else:
        messages.success(request, done.format(tag=wanted))
    return redirect(back)


@require_POST
@login_required
def tag_follow(request, tag: str):
    """Follow a tag: its public statuses show in the viewer's home."""
    return _change_tag_follow(
        request,
        tag,
        tagfollows.tag_follow,
        "You follow #{tag}: its public statuses show in your home.",
    )


@require_POST
@login_required
def tag_unfollow(request, tag: str):
    return _change_tag_follow(
        request,
        tag,
        tagfollows.tag_unfollow,
        "You no longer follow #{tag}.",
    )


@require_safe
def followed_tags(request):
    """The tags the viewer follows, newest first, each with Unfollow. Its read
    rides with the auth check (as `blocked_and_muted`)."""
    found = tagfollows.followed_tags_get(reads=request.reads)
    if found is None:
        return login_required(followed_tags)(request)
    context = {"tags": found, "tags_max": settings.FOLLOWED_TAGS_MAX}
    return render(request, "timeline/followed_tags.html", context)


def status_detail(request, sid: int, form: StatusForm | None = None, code=200):
    """A status with its thread: what it replies to, its replies, a reply box.

    With `form`, the page again after a reply error, at the reply's POST-only
    address: the rows' forms and the pager lead from the status's own page
    (`page_path`)."""
    thread = selectors.thread_get(
        reads=request.reads, sid=sid, after=int_param(request, "after")
    )
    if thread is None:
        raise Http404("No such status")
    if form is None:
        # As Mastodon's: a reply keeps the warning of what it answers.
        form = StatusForm(
            initial={
                "text": _reply_start(thread.status, request.user),
                "cw": bool(thread.status.spoiler),
                "spoiler": thread.status.spoiler,
            }
        )
        page_path = None  # this address: the forms and the pager use the request's
    else:
        page_path = url_for("timeline:status_detail", sid)
    # The filters of `thread` fold or leave out the statuses around the one
    # opened, never that one: the reader asked for it.
    around = [s for s in (*thread.ancestors, *thread.replies) if s is not None]
    kept, folded = filters.viewer_filters(request.reads).fold(
        around, request.reads.proven_uid(), "thread"
    )
    shown = {s.id for s in kept}
    if len(kept) < len(around):
        thread = replace(
            thread,
            ancestors=[
                s if s is None or s.id in shown else None for s in thread.ancestors
            ],
            replies=[s for s in thread.replies if s.id in shown],
        )
    context = {
        "thread": thread,
        "thread_filtered": folded,
        "status": thread.status,
        "form": form,
        "page_path": page_path,
    }
    return render(request, "timeline/status.html", context, status=code)


def _reply_start(shown: Status, viewer) -> str:
    """What the reply box starts with, as Mastodon's: the author and the people the
    status mentions, each once, but the viewer. A reply goes to a repost's
    original, which the repost's author and mentions are."""
    author = shown.repost_author if shown.repost_of is not None else shown.author
    me = viewer.username.lower() if viewer.is_authenticated else None
    # Those the text names that named someone when it was posted, in its order.
    someone = dict(shown.mentions)
    mentioned = [n for n in richtext.mentioned_names(shown.text) if n in someone]
    names: dict[str, str] = {}
    for name in (author, *mentioned):
        if name.lower() != me:
            names.setdefault(name.lower(), name)
    return "".join(f"@{name} " for name in names.values())


@require_POST
@login_required
def status_reply(request, sid: int):
    """Reply from a status page; after an error, the page again with the text."""
    form = StatusForm(request.POST)
    if form.is_valid():
        try:
            reply = social.status_reply(
                author=request.user,
                sid=sid,
                text=richtext.local_handles(
                    form.cleaned_data["text"], request.get_host()
                ),
                limit=limits.post(request.user.id),
                unlisted=form.cleaned_data["unlisted"],
                spoiler=form.cleaned_data["spoiler"],
                # Unticked: as the status answered (a direct message's reply is one).
                direct=form.cleaned_data["direct"] or None,
            )
        except NotFound as error:
            raise Http404("No such status") from error
        except InvalidStatus as error:
            form.add_error("text", str(error))
        except TooManyAttempts as error:
            _too_fast(form, error)
            response = status_detail(request, sid, form=form, code=429)
            return too_many_requests(response, retry_after=error.retry_after)
    if form.errors:
        return status_detail(request, sid, form=form, code=400)
    messages.success(request, "Replied.")
    return redirect(reply.url)


@login_required
def status_edit(request, sid: int):
    """Edit a status of one's own (GET: the form with its text and warning; POST:
    save, back to the status). After an error, the form again with what was
    typed; another's status, or a repost, is not found here."""
    try:
        status = edits.editable_get(user=request.user, sid=sid)
    except NotFound as error:
        raise Http404("No such status") from error
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponseNotAllowed(["GET", "HEAD", "POST"])
    if request.method != "POST":
        form = StatusForm(
            initial={
                "text": status.text,
                "cw": bool(status.spoiler),
                "spoiler": status.spoiler,
            }
        )
        return _edit_page(request, status, form)
    form = StatusForm(request.POST)
    if form.is_valid():
        try:
            edited = edits.status_edit(
                user=request.user,
                sid=sid,
                text=richtext.local_handles(
                    form.cleaned_data["text"], request.get_host()
                ),
                spoiler=form.cleaned_data["spoiler"],
                limit=limits.post(request.user.id),
            )
        except NotFound as error:
            raise Http404("No such status") from error
        except InvalidStatus as error:
            form.add_error("text", str(error))
        except TooManyAttempts as error:
            _too_fast(form, error, "save")
            response = _edit_page(request, status, form, code=429)
            return too_many_requests(response, retry_after=error.retry_after)
    if form.errors:
        return _edit_page(request, status, form, code=400)
    if edited.edited == status.edited:
        messages.info(request, "Nothing changed.")
    else:
        messages.success(request, "Edited.")
    return redirect(edited.url)


def _edit_page(request, status: Status, form: StatusForm, code: int = 200):
    context = {"status": status, "form": form, "edits_max": edits.EDITS_MAX}
    return render(request, "timeline/status_edit.html", context, status=code)


@require_safe
def status_history(request, sid: int):
    """A status's versions, newest first, to whoever may see the status."""
    thread = selectors.thread_get(reads=request.reads, sid=sid)
    if thread is None or thread.status.repost_of is not None:
        raise Http404("No such status")
    versions = edits.status_history(sid)
    if not versions:
        raise Http404("No such status")
    context = {
        "status": thread.status,
        "cards": thread.cards,
        "versions": list(reversed(versions)),
    }
    return render(request, "timeline/status_history.html", context)


def _react(
    request,
    sid: int,
    change,
    done: str,
    too_often: str = "You have liked or reposted too often lately.",
):
    """Like, unlike, repost, bookmark or undo one, from the like budget; back to
    `next`."""
    back = safe_next(request, url_for("timeline:status_detail", sid))
    try:
        changed = change(user=request.user, sid=sid, limit=limits.like(request.user.id))
    except NotFound as error:
        raise Http404("No such status") from error
    except (Forbidden, BookmarksFull, CannotPin) as error:
        messages.error(request, str(error))
    except TooManyAttempts as error:
        return _slow_down(request, error, reason=too_often, back=back)
    else:
        if changed:
            messages.success(request, done)
    return redirect(back)


@require_POST
@login_required
def like(request, sid: int):
    return _react(request, sid, social.status_like, "Liked.")


@require_POST
@login_required
def poll_vote(request, sid: int):
    """Vote in a status's poll (`timeline.polls`), from the like budget; back to
    `next`, with the result or what is wrong."""
    back = safe_next(request, url_for("timeline:status_detail", sid))
    try:
        polls.poll_vote(
            user=request.user,
            sid=sid,
            choices=request.POST.getlist("choice"),
            limit=limits.like(request.user.id),
        )
    except NotFound as error:
        raise Http404("No such poll") from error
    except polls.PollRefused as error:
        messages.error(request, str(error))
    except TooManyAttempts as error:
        return _slow_down(
            request, error, reason="You have voted too often lately.", back=back
        )
    else:
        messages.success(request, "Voted.")
    return redirect(back)


@require_POST
@login_required
def unlike(request, sid: int):
    return _react(request, sid, social.status_unlike, "Like undone.")


@require_POST
@login_required
def repost(request, sid: int):
    return _react(request, sid, social.status_repost, "Reposted.")


@require_POST
@login_required
def unrepost(request, sid: int):
    return _react(request, sid, social.status_unrepost, "Repost undone.")


_BOOKMARKED_TOO_OFTEN = "You have bookmarked or liked too often lately."


@require_POST
@login_required
def bookmark(request, sid: int):
    return _react(
        request, sid, bookmarks.status_bookmark, "Bookmarked.", _BOOKMARKED_TOO_OFTEN
    )


@require_POST
@login_required
def unbookmark(request, sid: int):
    return _react(
        request,
        sid,
        bookmarks.status_unbookmark,
        "Bookmark removed.",
        _BOOKMARKED_TOO_OFTEN,
    )


_PINNED_TOO_OFTEN = "You have pinned, bookmarked or liked too often lately."


@require_POST
@login_required
def pin(request, sid: int):
    return _react(
        request, sid, pins.status_pin, "Pinned to your profile.", _PINNED_TOO_OFTEN
    )


@require_POST
@login_required
def unpin(request, sid: int):
    return _react(request, sid, pins.status_unpin, "Unpinned.", _PINNED_TOO_OFTEN)


_MUTED_TOO_OFTEN = "You have muted, bookmarked or liked too often lately."


@require_POST
@login_required
def mute_conversation(request, sid: int):
    return _react(
        request,
        sid,
        conversations.conversation_mute,
        "Conversation muted: its notifications stop.",
        _MUTED_TOO_OFTEN,
    )


@require_POST
@login_required
def unmute_conversation(request, sid: int):
    return _react(
        request,
        sid,
        conversations.conversation_unmute,
        "Conversation unmuted.",
        _MUTED_TOO_OFTEN,
    )


def bookmarks_page(request):
    """The viewer's bookmarks, newest bookmark first: only theirs, read with the
    auth check (as `notifications_page`)."""
    page = selectors.bookmarks_get(
        reads=request.reads, max_id=int_param(request, "max_id")
    )
    if page is None:
        return login_required(bookmarks_page)(request)
    return render(request, "timeline/bookmarks.html", {"page": page})


def _reactors(request, sid: int, relation: str):
    found = selectors.reactors_page(
        reads=request.reads,
        sid=sid,
        relation=relation,
        cursor=int_param(request, "cursor"),
    )
    if found is None:
        raise Http404("No such status")
    return render(request, "timeline/reactors.html", {"found": found})


@require_safe
def status_quotes(request, sid: int):
    """The statuses quoting a status that the viewer may see, newest first."""
    found = selectors.quotes_get(
        reads=request.reads, sid=sid, max_id=int_param(request, "max_id")
    )
    if found is None:
        raise Http404("No such status")
    # Its author revokes the quotes from here (`quote_revoke`).
    revocable = request.user.is_authenticated and request.user.id == (
        found.status.author_id
    )
    return render(
        request, "timeline/quotes.html", {"found": found, "revocable": revocable}
    )


@require_POST
@login_required
def quote_revoke(request, sid: int, quoting_id: int):
    """The quoted author detaches a quote of their status (`quotes.quote_revoke`,
    from the like budget): back to `next` saying so; 403 for anyone else; 404 for
    a quote hidden from them (revoked all the same, as the API's)."""
    back = safe_next(request, url_for("timeline:status_quotes", sid))
    try:
        revoked = quotes.quote_revoke(
            user=request.user,
            sid=sid,
            quoting_id=quoting_id,
            limit=limits.like(request.user.id),
        )
    except NotFound as error:
        raise Http404("No such quote") from error
    except Forbidden as error:
        raise PermissionDenied(str(error)) from error
    except TooManyAttempts as error:
        return _slow_down(
            request, error, reason="You have changed too much lately.", back=back
        )
    try:
        # A quote hidden from them (a private account's, a direct message to
        # others, a block) is revoked all the same and answered as an id that
        # quotes nothing, as the API's revoke: nothing of it told.
        social.status_target(user=request.user, sid=quoting_id)
    except NotFound as error:
        raise Http404("No such quote") from error
    messages.success(
        request,
        f"Quote revoked: the post by @{revoked.author} no longer shows yours.",
    )
    return redirect(back)


def status_likes(request, sid: int):
    return _reactors(request, sid, "likes")


def status_reposts(request, sid: int):
    return _reactors(request, sid, "reposts")


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
    return redirect(safe_next(request, request.user.url))


def profile(request, username: str):
    vid = request.reads.claimed_uid
    # The viewer's lists, for the profile's "Add to a list" (read with the first
    # round trip; shown only to a proven viewer who follows the owner).
    own_lists = lists.lists_queue(request.reads, vid) if vid is not None else None
    found = selectors.profile_get(
        reads=request.reads, username=username, max_id=int_param(request, "max_id")
    )
    if found is None:
        raise Http404("No such user")
    own = request.user.is_authenticated and request.user.id == found.user.id
    # A mention's link names the account it meant (`richtext.mention_url`): one
    # deleted since, whose name someone else claimed, is not this one.
    named = request.GET.get("id", "")
    page = _filtered(request, found.page, "account")
    pinned = _filtered(
        request, Page(statuses=found.pinned, next_max_id=None), "account"
    )
    context = {
        "profile": found,
        "page": page,
        "pinned": pinned.statuses,
        "pinned_filtered": pinned.filtered,
        "own": own,
        "own_lists": own_lists.value
        if own_lists is not None and found.viewer_follows and not own
        else None,
        "not_named": named.isascii()
        and named.isdigit()
        and len(named) <= 16
        and int(named) != found.user.id,
    }
    if own:
        context["compose_next"] = request.path
    return render(request, "timeline/profile.html", context)


def _slow_down(request, error: TooManyAttempts, *, reason: str, back: str):
    """The page that says an abuse limit refused a button's change: 429."""
    context = {"reason": reason, "wait": error.wait, "back": back}
    response = render(request, "429.html", context)
    return too_many_requests(response, retry_after=error.retry_after)


def _change_follow(request, username: str, change):
    followee_id = user_id_by_username(username=username)
    if followee_id is None:
        raise Http404("No such user")
    done = None
    try:
        done = change(
            follower=request.user,
            followee_id=followee_id,
            limit=limits.follow(request.user.id),
        )
    except (CannotFollowSelf, Blocked, Busy, FollowRequestsFull) as error:
        messages.error(request, str(error))
    except TooManyAttempts as error:
        return _slow_down(
            request,
            error,
            reason="You have followed and unfollowed too many people lately.",
            back=safe_next(request, url_for("timeline:profile", username)),
        )
    if done == services.REQUESTED:
        messages.success(
            request, f"Follow request sent: @{username} approves who follows them."
        )
    return redirect(safe_next(request, url_for("timeline:profile", username)))


@require_POST
@login_required
def follow(request, username: str):
    """Follow, or ask to follow a private account (`timeline.privacy`)."""
    return _change_follow(request, username, services.follow_ask)


@require_POST
@login_required
def request_cancel(request, username: str):
    """Cancel one's own pending follow request, from the follow budget."""
    return _change_follow(
        request,
        username,
        lambda follower, followee_id, limit: privacy.follow_request_cancel(
            requester=follower, owner_id=followee_id, limit=limit
        ),
    )


@require_POST
@login_required
def unfollow(request, username: str):
    return _change_follow(request, username, services.follow_delete)


def _people(request, username: str, relation: str, title: str):
    people = selectors.people_page(
        reads=request.reads,
        username=username,
        relation=relation,
        cursor=int_param(request, "cursor"),
    )
    if people is None:
        raise Http404("No such user")
    context = {"people": people, "relation": relation, "title": title}
    return render(request, "timeline/people.html", context)


def followers(request, username: str):
    return _people(request, username, "followers", "Followers")


def following(request, username: str):
    return _people(request, username, "following", "Following")


def _change_block(request, username: str, change, done: str):
    """Block, unblock, mute or unmute the named user, from the follow budget."""
    other_id = user_id_by_username(username=username)
    if other_id is None:
        raise Http404("No such user")
    back = safe_next(request, url_for("timeline:profile", username))
    try:
        change(request.user, other_id, limits.follow(request.user.id))
    except (CannotBlock, Busy) as error:
        messages.error(request, str(error))
    except TooManyAttempts as error:
        return _slow_down(
            request,
            error,
            reason="You have changed whom you follow, block or mute too often lately.",
            back=back,
        )
    else:
        messages.success(request, done.format(username=username))
    return redirect(back)


@require_POST
@login_required
def block(request, username: str):
    return _change_block(
        request,
        username,
        lambda user, other, limit: blocks.block_create(
            blocker=user, blocked_id=other, limit=limit
        ),
        "You blocked @{username}.",
    )


@require_POST
@login_required
def unblock(request, username: str):
    return _change_block(
        request,
        username,
        lambda user, other, limit: blocks.block_delete(
            blocker=user, blocked_id=other, limit=limit
        ),
        "You unblocked @{username}.",
    )


@require_POST
@login_required
def mute(request, username: str):
    return _change_block(
        request,
        username,
        lambda user, other, limit: blocks.mute_create(
            user=user, muted_id=other, limit=limit
        ),
        "You muted @{username}: their statuses no longer show on your home.",
    )


@require_POST
@login_required
def unmute(request, username: str):
    return _change_block(
        request,
        username,
        lambda user, other, limit: blocks.mute_delete(
            user=user, muted_id=other, limit=limit
        ),
        "You unmuted @{username}.",
    )


def blocked_and_muted(request):
    """The viewer's blocked and muted people. Its reads ride with the auth check
    (`login_required` up front would send that check alone: one more round trip)."""
    found = selectors.blocked_and_muted_get(
        reads=request.reads,
        blocked_cursor=int_param(request, "blocked"),
        muted_cursor=int_param(request, "muted"),
    )
    if found is None:  # a visitor: to the login page, and back here after it
        return login_required(blocked_and_muted)(request)
    return render(request, "timeline/blocked.html", {"lists": found})


def follow_requests(request):
    """The viewer's pending follow requests, with Approve and Deny. Its reads ride
    with the auth check (as `blocked_and_muted`)."""
    found = selectors.follow_requests_get(
        reads=request.reads, cursor=int_param(request, "cursor")
    )
    if found is None:
        return login_required(follow_requests)(request)
    return render(request, "timeline/requests.html", {"found": found})


def _answer_request(request, username: str, answer, done: str):
    requester_id = user_id_by_username(username=username)
    if requester_id is None:
        raise Http404("No such user")
    back = safe_next(request, url_for("timeline:follow_requests"))
    try:
        answered = answer(request.user, requester_id)
    except Busy as error:
        messages.error(request, str(error))
    except TooManyAttempts as error:
        response = render(
            request,
            "429.html",
            {
                "reason": "You have approved or changed follows too often lately.",
                "wait": error.wait,
                "back": back,
            },
        )
        return too_many_requests(response, retry_after=error.retry_after)
    else:
        if answered:
            messages.success(request, done.format(username=username))
        else:
            messages.info(request, f"@{username} has no follow request waiting.")
    return redirect(back)


@require_POST
@login_required
def request_approve(request, username: str):
    """Approve a follow request: they follow you, from your follow budget."""
    return _answer_request(
        request,
        username,
        lambda user, other: privacy.follow_request_approve(
            owner=user, requester_id=other, limit=limits.follow(user.id)
        ),
        "@{username} follows you now.",
    )


@require_POST
@login_required
def request_deny(request, username: str):
    """Deny a follow request (the requester is not told)."""
    return _answer_request(
        request,
        username,
        lambda user, other: privacy.follow_request_deny(owner=user, requester_id=other),
        "You denied @{username}'s follow request.",
    )


def notifications_page(request):
    """The viewer's notifications, newest first; unread ones highlighted. Reading
    marks nothing: the page's script (or its button) posts the mark. Its reads ride
    with the auth check (as `blocked_and_muted`)."""
    cursor = int_param(request, "cursor")
    found = selectors.notifications_get(reads=request.reads, cursor=cursor)
    if found is None:
        return login_required(notifications_page)(request)
    # The statuses they are about, as the viewer's filters of `notifications` show
    # them: a group about one a `hide` filter matches is left out.
    about = [item.status for item in found.items if item.status is not None]
    kept, folded = filters.viewer_filters(request.reads).fold(
        about, request.reads.proven_uid(), "notifications"
    )
    hidden = 0
    if len(kept) < len(about):
        shown = {s.id for s in kept}
        items = [i for i in found.items if i.status is None or i.status.id in shown]
        hidden = len(found.items) - len(items)
        found = replace(found, items=items)
    context = {
        "found": found,
        "first_page": cursor is None,
        "filtered": folded,
        "hidden": hidden,
    }
    return render(request, "timeline/notifications.html", context)


@require_POST
@login_required
def notifications_read(request):
    """Mark the viewer's notifications read up to the place the page showed on top
    (`up_to`): by the page's script once shown, or by its "Mark all as read"."""
    raw = request.POST.get("up_to", "")
    if raw.isascii() and raw.isdigit() and len(raw) <= 16:
        notifications.notifications_mark_read(user=request.user, up_to=int(raw))
    else:
        messages.error(request, "Nothing was marked read: the page sent no position.")
    return redirect(url_for("timeline:notifications"))


@require_safe
def messages_page(request):
    """The viewer's conversations of direct messages, the most recent first: read
    with the auth check (as `bookmarks_page`)."""
    found = selectors.conversations_get(
        reads=request.reads,
        size=settings.TIMELINE_PAGE_SIZE,
        max_id=int_param(request, "max_id"),
    )
    if found is None:
        return login_required(messages_page)(request)
    return render(request, "timeline/messages.html", {"found": found})


@require_POST
@login_required
def messages_read(request):
    """Mark read the conversations the page showed (`seen`: `<id>:<newest>`), by
    the page's script once shown or by its "Mark all as read"; one that got a
    newer message since stays unread."""
    seen = []
    for raw in request.POST.getlist("seen")[: settings.TIMELINE_PAGE_SIZE]:
        conv, _, at = raw.partition(":")
        if all(v.isascii() and v.isdigit() and len(v) <= 16 for v in (conv, at)):
            seen.append((int(conv), int(at)))
    direct.conversations_read(uid=request.user.id, seen=seen)
    return redirect(url_for("timeline:messages"))


@require_POST
@login_required
def conversation_remove(request, conv: int):
    """Take a conversation off the viewer's messages (a new message brings it
    back; its messages stay on their pages)."""
    direct.conversation_remove(uid=request.user.id, conversation=conv)
    messages.success(request, "The conversation is off your messages.")
    return redirect(url_for("timeline:messages"))


@require_safe
def search(request):
    """Find people by the start of their username or display name."""
    query = request.GET.get("q", "")
    found = selectors.people_search(reads=request.reads, query=query)
    context = {"query": query, "people": found}
    return render(request, "timeline/search.html", context)


@require_safe
def search_json(request):
    """The same search for the search box's suggestions, as JSON."""
    found = selectors.people_search(reads=request.reads, query=request.GET.get("q", ""))
    return JsonResponse(
        {
            "people": [
                {
                    "username": person.username,
                    "name": person.display_name,
                    "avatar": person.avatar_url,
                    "url": person.url,
                }
                for person in found
            ]
        }
    )


def suggested(request):
    """Who to follow: friends of friends first, then the most followed. Its reads
    ride with the auth check (as `blocked_and_muted`)."""
    found = selectors.suggestions_get(reads=request.reads, shown=SUGGESTED_SHOWN)
    if not request.user.is_authenticated:
        return login_required(suggested)(request)
    return render(request, "timeline/suggested.html", {"people": found})


SUGGESTED_SHOWN = 20


@require_POST
@login_required
def suggestion_dismiss(request, username: str):
    """Take someone out of the viewer's suggestions for good (`timeline.suggestions`:
    the page, the empty home and the client API all leave them out); back to
    `next`."""
    dismissed_id = user_id_by_username(username=username)
    if dismissed_id is None:
        raise Http404("No such user")
    if suggestions.suggestion_dismiss(user=request.user, dismissed_id=dismissed_id):
        messages.success(request, f"@{username} will not be suggested again.")
    return redirect(safe_next(request, url_for("timeline:suggested")))


def _report_ticked(request) -> list[int]:
    """The statuses a report's form ticked (`status` values), each once."""
    values = request.POST.getlist("status")
    return list(
        dict.fromkeys(
            int(v) for v in values if v.isascii() and v.isdigit() and len(v) <= 19
        )
    )


def report(request, username: str):
    """Report an account (and some of its statuses) to the operators: GET the form
    (its profile's first page of statuses to tick; `?status=` ticks one), POST it.
    Reporting neither blocks nor mutes: the thanks page offers both. Signed in only;
    the profile is read with the viewer's check (one round trip), then that asked."""
    if request.method not in ("GET", "HEAD", "POST"):
        return HttpResponseNotAllowed(["GET", "HEAD", "POST"])
    asked = int_param(request, "status") if request.method != "POST" else None
    # A status older than the profile's first page (opened from its own page) is
    # read with the profile: no round trip of its own.
    extra = reports.status_queue(request.reads, asked)
    found = selectors.profile_get(reads=request.reads, username=username)
    if not request.user.is_authenticated:
        return login_redirect(request)
    if found is None:
        raise Http404("No such user")
    target = found.user
    back = url_for("timeline:profile", target.username)
    if target.id == request.user.id:
        messages.error(request, "You cannot report yourself.")
        return redirect(back)
    shown = reports.offered(
        found, extra.value if extra is not None else None, request.user.id
    )

    def page(form: ReportForm, ticked: list[int], code: int = 200):
        context = {
            "form": form,
            "target": target,
            "statuses": shown,
            "ticked": set(ticked),
            "statuses_max": settings.REPORT_STATUSES_MAX,
        }
        return render(request, "timeline/report.html", context, status=code)

    if request.method != "POST":
        return page(ReportForm(), [asked] if asked is not None else [])
    form = ReportForm(request.POST)
    ticked = _report_ticked(request)
    if not form.is_valid():
        return page(form, ticked, 400)
    try:
        reports.report_file(
            reporter=request.user,
            target_id=target.id,
            category=form.cleaned_data["category"],
            comment=form.cleaned_data["comment"],
            status_ids=ticked,
            limit=limits.report(request.user.id),
        )
    except TooManyAttempts as error:
        form.add_error(
            None,
            "You have sent too many reports lately. Your text is kept here: "
            f"send it in {error.wait}.",
        )
        response = page(form, ticked, 429)
        return too_many_requests(response, retry_after=error.retry_after)
    except NotFound:
        form.add_error(
            None,
            "A status you ticked is gone, or not theirs: untick it and send again.",
        )
        return page(form, ticked, 400)
    except reports.ReportRefused as error:
        form.add_error(None, str(error))
        return page(form, ticked, 400)
    messages.success(request, "Thanks: the people who run this site will look at it.")
    return redirect(url_for("timeline:reported", target.username))


@require_safe
def reported(request, username: str):
    """After a report: offers to block or mute the account (reporting does neither)."""
    found = selectors.profile_get(reads=request.reads, username=username)
    if not request.user.is_authenticated:
        return login_redirect(request)
    if found is None:
        raise Http404("No such user")
    return render(request, "timeline/reported.html", {"profile": found})
