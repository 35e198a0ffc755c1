"""Statuses: post (with Idempotency-Key), show, delete, a thread, likes, reposts."""

from __future__ import annotations

from datetime import UTC, datetime

from django.conf import settings
from django.http import QueryDict

from accounts import limits
from accounts.domain import AccountError
from api import entities, idempotency
from api.http import (
    OPTIONAL,
    ApiError,
    Op,
    Reply,
    endpoint,
    flag,
    not_found,
    own_id,
    param,
    param_list,
    params,
    text_param,
    unprocessable,
)
from api.pagination import Window, link_header
from timeline import (
    bookmarks,
    conversations,
    edits,
    ids,
    pins,
    polls,
    quotes,
    richtext,
    scheduled,
    selectors,
    services,
    social,
)
from timeline.domain import (
    Busy,
    Forbidden,
    InvalidStatus,
    NotFound,
    Poll,
    Status,
    TimelineError,
    normalize_spoiler,
    normalize_text,
    text_problem,
    text_shows_something,
)
from timeline.scheduled import ScheduleRefused
from timeline.selectors import StatusWindow

IN_REPLY_NOT_FOUND = "The post you are trying to reply to does not appear to exist."
# Mastodon's answer to a `quoted_status_id` that is gone, hidden from the poster or
# not theirs to quote (`Api::V1::StatusesController#set_quoted_status`: a 404 for
# each, `statuses.errors.quoted_status_not_found`).
QUOTED_NOT_FOUND = "The post you are trying to quote does not appear to exist."


def entities_of(
    request, statuses: list[Status], window: StatusWindow | None = None
) -> list[dict]:
    """Status entities of these statuses: their authors and reposts' originals,
    read with a window's statuses on one server, else in one more round trip
    (`entities.related_get`)."""
    related = entities.related_get(
        request.reads,
        statuses,
        accounts=window.accounts if window is not None else None,
        originals=window.originals if window is not None else None,
        named=window.named if window is not None else None,
    )
    return entities.statuses(statuses, related, entities.Urls.of(request))


def _entity(request, status: Status | None) -> dict:
    found = entities_of(request, [status]) if status is not None else []
    if not found:
        raise not_found()
    return found[0]


def _read(request, sid: int) -> Status | None:
    """A status by id with the viewer's like and repost, without the visibility
    check: for the viewer's own statuses only (`_shown` for others')."""
    return selectors.statuses_by_id_queue(request.reads, [sid]).value.statuses[0]


def _visibility_problem(values, user) -> str | None:
    """Whether a post's requested visibility can be honoured.

    A status is seen as its author's account is (public, or private: approved
    followers only), and a public account's status may be `unlisted`: kept off
    the public timelines (`timeline.domain.Status.unlisted`). What is asked is
    accepted when the status will be seen by no more people than asked: `public`
    and `unlisted` from a public account, any from a private one (its statuses
    stay private), and `direct` (a direct message, `timeline.direct`) from anyone,
    but not scheduled. `private` from a public account would show to everyone:
    refused rather than published wider than asked.
    """
    visibility = param(values, "visibility") or ""
    if visibility in ("", "public", "unlisted"):
        return None
    if visibility == "direct":
        if param(values, "scheduled_at"):
            return "Direct messages cannot be scheduled on this site"
        return None
    if visibility == "private":
        return (
            None
            if user.private
            else "Visibility private needs a private account on this site"
        )
    return "Visibility is not included in the list"


def _sent(values, name: str) -> bool:
    """Whether a parameter carries a value: an empty field, and JSON's `null`, `[]`
    or `{}`, say "none" (`"poll": null` is how a JSON client posts without one)."""
    sent = values.getlist(name) if isinstance(values, QueryDict) else [values[name]]
    return any(value not in (None, "", [], {}) for value in sent)


POLL_UNCHANGED = (
    "A poll cannot be changed on this site: edit the text, or delete the status "
    "and post it again"
)


def _unsupported(values, user) -> str | None:
    """What a post asks for that the site cannot honour (422 rather than ignored)."""
    if param_list(values, "media_ids"):
        return "Media attachments are not supported on this site"
    if param(values, "quoted_status_id") and param(values, "scheduled_at"):
        return "A quote cannot be scheduled on this site"
    return _visibility_problem(values, user)


def poll_asked(values) -> dict | None:
    """The poll a request asks for, as sent (`options`, `expires_in`, `multiple`,
    `hide_totals`): a JSON body's `poll` object, or a form's `poll[...]` fields;
    None for none (`"poll": null`, empty fields). 422 for a `poll` of another
    shape."""
    if not isinstance(values, QueryDict) and "poll" in values:
        asked = values["poll"]
        if asked in (None, "", [], {}):
            return None
        if not isinstance(asked, dict):
            raise unprocessable("Poll must be an object of options and expires_in")
        return asked
    if not any(str(name).startswith("poll") and _sent(values, name) for name in values):
        return None
    if isinstance(values, QueryDict) and _sent(values, "poll"):
        raise unprocessable("Poll must be sent as poll[options][] and poll[expires_in]")
    return {
        "options": param_list(values, "poll[options]"),
        "expires_in": param(values, "poll[expires_in]"),
        "multiple": param(values, "poll[multiple]"),
        "hide_totals": param(values, "poll[hide_totals]"),
    }


def _poll_options(asked: dict) -> list[str]:
    options = asked.get("options")
    if not isinstance(options, list) or not all(isinstance(o, str) for o in options):
        raise unprocessable("Poll options must be a list of texts")
    return options


def poll_of(values, *, draft: bool = False) -> Poll | None:
    """The poll a post asks for (`poll_asked`), made to the site's rules
    (`timeline.polls.poll_make`: Mastodon's limits; `draft`: a scheduled
    status's, open its seconds once posted, `poll_draft`); None for none; 422
    saying what is wrong."""
    asked = poll_asked(values)
    if asked is None:
        return None
    options = _poll_options(asked)
    try:
        expires_in = int(param(asked, "expires_in") or "")
    except ValueError:
        raise unprocessable(
            "Poll expires_in must be the seconds the poll stays open"
        ) from None
    try:
        return (polls.poll_draft if draft else polls.poll_make)(
            options,
            expires_in,
            multiple=flag(asked, "multiple"),
            hide_totals=flag(asked, "hide_totals"),
        )
    except polls.PollRefused as error:
        raise unprocessable(str(error)) from error


def _poll_kept(found: Poll | None, asked: dict) -> bool:
    """Whether a poll an edit sends is the status's as it stands: its options (as
    `poll_make` cleans them), `multiple` and `hide_totals` (`expires_in` is not
    compared: apps send what is left of it, or the first duration again)."""
    if found is None:
        return False
    options = tuple(normalize_spoiler(o) for o in _poll_options(asked))
    return (
        options == found.options
        and flag(asked, "multiple") == found.multiple
        and flag(asked, "hide_totals") == found.hide_totals
    )


def _text_error(text: str, spoiler: str, error: InvalidStatus) -> ApiError:
    """A refused text in Mastodon's words where it has them (the rule is the
    service's, `timeline.domain.text_problem`: the text and its content warning
    counted together), else the service's own."""
    normal = normalize_text(text)
    if not text_shows_something(normal):
        return unprocessable("Text can't be blank")
    if text_problem(normal, normalize_spoiler(spoiler)) is not None:
        limit = settings.STATUS_MAX_LENGTH
        return unprocessable(f"Text character limit of {limit} exceeded")
    return unprocessable(str(error))


def _post(request, values, user, reserved_id: int | None = None) -> Status:
    text = richtext.local_handles(
        text_param(values, "status") or "", request.get_host()
    )
    reply_to = param(values, "in_reply_to_id")
    visibility = param(values, "visibility") or ""
    unlisted = visibility == "unlisted"
    # A reply to a direct message is one: unless another visibility is asked.
    direct = True if visibility == "direct" else False if visibility else None
    spoiler = text_param(values, "spoiler_text") or ""
    poll = poll_of(values)
    limit = limits.post(user.id)
    quoted = param(values, "quoted_status_id")
    try:
        if quoted:
            if not quoted.isdecimal() or len(quoted) > 19:
                raise ApiError(404, QUOTED_NOT_FOUND)
            if reply_to and (not reply_to.isdecimal() or len(reply_to) > 19):
                raise ApiError(404, IN_REPLY_NOT_FOUND)
            try:
                target = quotes.quote_target(user=user, sid=int(quoted))
            except (NotFound, Forbidden) as error:
                raise ApiError(404, QUOTED_NOT_FOUND) from error
            if target.id != int(quoted):
                # A reblog's id (its original answered): Mastodon's quote policy
                # denies a reblog, to its reblogger too (`quote_policy_for_account`).
                raise ApiError(404, QUOTED_NOT_FOUND)
            try:
                return quotes.status_quote(
                    author=user,
                    sid=int(quoted),
                    text=text,
                    limit=limit,
                    reserved_id=reserved_id,
                    unlisted=unlisted,
                    spoiler=spoiler,
                    direct=bool(direct),
                    poll=poll,
                    reply_to=int(reply_to) if reply_to else None,
                )
            except (NotFound, Forbidden) as error:
                # The quoted status went meanwhile, or the parent is hidden.
                raise ApiError(
                    404, IN_REPLY_NOT_FOUND if reply_to else QUOTED_NOT_FOUND
                ) from error
        if reply_to:
            if not reply_to.isdecimal() or len(reply_to) > 19:
                raise ApiError(404, IN_REPLY_NOT_FOUND)
            try:
                return social.status_reply(
                    author=user,
                    sid=int(reply_to),
                    text=text,
                    limit=limit,
                    reserved_id=reserved_id,
                    unlisted=unlisted,
                    spoiler=spoiler,
                    direct=direct,
                    poll=poll,
                )
            except NotFound as error:
                raise ApiError(404, IN_REPLY_NOT_FOUND) from error
        return services.status_create(
            author=user,
            text=text,
            limit=limit,
            reserved_id=reserved_id,
            unlisted=unlisted,
            spoiler=spoiler,
            direct=bool(direct),
            poll=poll,
        )
    except quotes.QuotesFull as error:
        raise unprocessable(str(error)) from error
    except InvalidStatus as error:
        raise _text_error(text, spoiler, error) from error


UNSCHEDULED = (
    "The scheduled status this Idempotency-Key made is not waiting any more: it "
    "was posted at its time, or cancelled"
)


def status_create(request) -> dict:
    """Post a status (a reply with `in_reply_to_id`); with `scheduled_at`, schedule
    it instead (`_schedule`): a ScheduledStatus. A repeated Idempotency-Key answers
    what its first request made (`api.idempotency`), whatever the repeat asks."""
    values = params(request)
    user = request.user
    problem = _unsupported(values, user)
    if problem:
        raise ApiError(422, f"Validation failed: {problem}")
    key = request.headers.get("Idempotency-Key")
    if not key:
        if param(values, "scheduled_at"):
            return _schedule(request, values, user)
        return _entity(request, _post(request, values, user))
    # Twice at most: a schedule whose claim a retry took over while it stalled
    # wrote nothing, and asks again what the key made.
    for _ in range(2):
        try:
            return _keyed(request, values, user, key)
        except scheduled.ReceiptLost:
            continue
    raise ApiError(409, "A request with this Idempotency-Key is under way")


def _made(request, made: idempotency.Made) -> dict:
    """Answer what the key made. Gone since (a status deleted; a scheduled status
    posted at its time or cancelled): 404, as Mastodon's, and nothing made again.
    A scheduled status's post is not answered in its place: the client asked for
    a ScheduledStatus, and a Status is another entity."""
    if not made.scheduled:
        return _entity(request, _read(request, made.id))
    try:
        entry = scheduled.scheduled_get(user=request.user, n=made.id)
    except NotFound as error:
        raise ApiError(404, UNSCHEDULED) from error
    return entities.scheduled_status(entry, locked=request.user.private)


def _keyed(request, values, user, key: str) -> dict:
    """A post or a schedule under an Idempotency-Key (`api.idempotency`)."""
    try:
        claim = idempotency.claim(uid=user.id, key=key)
    except Busy as error:
        raise ApiError(409, str(error)) from error
    if isinstance(claim, idempotency.Made):
        return _made(request, claim)
    if claim.sid is not None and selectors.status_published(
        author_id=user.id, sid=claim.sid
    ):
        # A claim taken over whose post went through after all.
        claim.done(claim.sid)
        return _entity(request, _read(request, claim.sid))
    # A claim that carries a status id took over a post (asked for now) whose
    # request may still publish it: the key is that post's, so a repeat finishes
    # it with that id even when it asks to schedule (else one key would make a
    # status and a scheduled status).
    if claim.sid is None and param(values, "scheduled_at"):
        try:
            # The claim is settled in the step that stores the entry.
            return _schedule(request, values, user, receipt=claim.receipt())
        except scheduled.ReceiptLost:
            raise  # the claim is another request's now: not this one's to release
        except (ApiError, TimelineError, AccountError):
            # Refused (a time, a cap, a bad text, the budget): nothing stands.
            claim.release()
            raise
    if claim.sid is None:
        # The id first, in the claim: a repeat after an outage finds whether the
        # status stands by it, and posts with it if not (`api.idempotency`).
        claim.reserve(ids.status_ids_take(author_id=user.id)[0])
    try:
        status = _post(request, values, user, reserved_id=claim.sid)
    except (ApiError, TimelineError, AccountError):
        # Refused (a bad text, a reply to nothing, the posting budget): nothing
        # stands, so a corrected repeat may post.
        claim.release()
        raise
    # Any other failure keeps the claim: a Redis error (a reply lost after the
    # server published) or a dying worker says nothing of what was written, and a
    # retry that posted again would make the status twice. The claim ends as a
    # crashed request's does (`idempotency.CLAIM_HOLD_SECONDS`).
    claim.done(status.id)
    return _entity(request, status)


def scheduled_time(value: str | None) -> float:
    """A `scheduled_at` as unix seconds: ISO 8601 (`Z` or an offset; none: UTC)."""
    try:
        moment = datetime.fromisoformat((value or "").strip().replace("Z", "+00:00"))
    except ValueError as error:
        raise ApiError(
            422, "Validation failed: Scheduled at is not a valid time"
        ) from error
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()


def _schedule(request, values, user, receipt: scheduled.Receipt | None = None) -> dict:
    """Schedule the status (`timeline.scheduled`): the rules of a post now, its
    time at least five minutes ahead, the caps; a ScheduledStatus. `receipt`: an
    Idempotency-Key's claim, settled with the entry (`_keyed`)."""
    text = richtext.local_handles(
        text_param(values, "status") or "", request.get_host()
    )
    spoiler = text_param(values, "spoiler_text") or ""
    reply_to = param(values, "in_reply_to_id")
    if reply_to and (not reply_to.isdecimal() or len(reply_to) > 19):
        raise ApiError(404, IN_REPLY_NOT_FOUND)
    try:
        entry = scheduled.status_schedule(
            author=user,
            text=text,
            at=scheduled_time(param(values, "scheduled_at")),
            spoiler=spoiler,
            unlisted=param(values, "visibility") == "unlisted",
            reply_to=int(reply_to) if reply_to else None,
            limit=limits.post(user.id),
            receipt=receipt,
            poll=poll_of(values, draft=True),
        )
    except NotFound as error:
        raise ApiError(404, IN_REPLY_NOT_FOUND) from error
    except ScheduleRefused as error:
        raise ApiError(422, f"Validation failed: Scheduled at {error}") from error
    except InvalidStatus as error:
        raise _text_error(text, spoiler, error) from error
    return entities.scheduled_status(entry, locked=user.private)


def scheduled_index(request) -> Reply:
    """The viewer's scheduled statuses, newest id first (Mastodon's), by window."""
    window = Window.of(request, default=20, maximum=40)
    waiting = sorted(
        scheduled.scheduled_list(user=request.user), key=lambda e: e.id, reverse=True
    )
    if window.max_id is not None:
        waiting = [e for e in waiting if e.id < window.max_id]
    if window.floor is not None:
        waiting = [e for e in waiting if e.id > window.floor]
    page = waiting[-window.limit :] if window.from_oldest else waiting[: window.limit]
    body = [entities.scheduled_status(e, locked=request.user.private) for e in page]
    headers = (
        link_header(request, next_max_id=page[-1].id, prev_min_id=page[0].id)
        if page
        else {}
    )
    return Reply(body, headers=headers)


def scheduled_show(request, id: str) -> dict:
    entry = scheduled.scheduled_get(user=request.user, n=own_id(id))
    return entities.scheduled_status(entry, locked=request.user.private)


def scheduled_update(request, id: str) -> dict:
    """Move a scheduled status to another `scheduled_at`."""
    values = params(request)
    at = scheduled_time(param(values, "scheduled_at"))
    try:
        entry = scheduled.scheduled_move(user=request.user, n=own_id(id), at=at)
    except ScheduleRefused as error:
        raise ApiError(422, f"Validation failed: Scheduled at {error}") from error
    return entities.scheduled_status(entry, locked=request.user.private)


def scheduled_remove(request, id: str) -> dict:
    """Cancel a scheduled status; 422 once its job has started to post it."""
    try:
        cancelled = scheduled.scheduled_cancel(user=request.user, n=own_id(id))
    except ScheduleRefused as error:
        raise ApiError(422, f"Validation failed: {error}") from error
    if not cancelled:
        raise not_found()
    return {}


def status_show(request, id: str) -> dict:
    """A status the viewer may see; 404 for one gone or hidden from them."""
    found = selectors.status_get(reads=request.reads, sid=int(id))
    return _entity(request, found)


def status_remove(request, id: str) -> dict:
    """Delete one's own status; answer it with its source `text` (for a redraft)."""
    sid = int(id)
    found = _read(request, sid)
    if found is None or found.author_id != request.user.id:
        raise not_found()  # another's status: Mastodon answers 404 too
    entity = _entity(request, found)
    services.status_delete(user=request.user, sid=sid)
    entity.pop("content", None)
    entity["text"] = found.text  # its warning stays in `spoiler_text`
    return entity


def status_update(request, id: str) -> dict:
    """Edit one's own status (Mastodon's PUT): `status` and `spoiler_text`, each
    kept as it was when not sent; the status as edited. Another's: 404, as
    Mastodon's; a repost: 403; media: 422 (the site has none).

    A poll never changes (`timeline.polls`), where Mastodon's edit may replace one
    (and reset its votes): a `poll` the status has as it is (`_poll_kept`) is
    taken as no change, as apps resend it with every edit; another poll, or one
    on a status without, is a 422 rather than dropped in silence; none sent (or
    `null`) keeps it too, where Mastodon's would remove it: a vote is never lost.

    Mastodon clears a warning that is not sent; here it stays: an app that edits
    the text alone (Mastodon.py sends no `spoiler_text` unless given one) must not
    strip a warning its readers rely on. Sent empty, it goes."""
    values = params(request)
    sid = int(id)
    found = _read(request, sid)
    if found is None or found.author_id != request.user.id:
        raise not_found()
    if param_list(values, "media_ids"):
        raise ApiError(
            422, "Validation failed: Media attachments are not supported on this site"
        )
    asked = poll_asked(values)
    if asked is not None and not _poll_kept(found.poll, asked):
        raise unprocessable(POLL_UNCHANGED)
    text = found.text
    if "status" in values:
        text = richtext.local_handles(
            text_param(values, "status") or "", request.get_host()
        )
    spoiler = found.spoiler
    if "spoiler_text" in values:
        spoiler = text_param(values, "spoiler_text") or ""
    try:
        edits.status_edit(
            user=request.user,
            sid=sid,
            text=text,
            spoiler=spoiler,
            limit=limits.post(request.user.id),
        )
    except InvalidStatus as error:
        raise _text_error(text, spoiler, error) from error
    return _entity(request, _read(request, sid))


def status_history(request, id: str) -> list[dict]:
    """A status's versions, oldest first, the current one last (Mastodon's
    StatusEdit); 404 for a status gone or hidden from the viewer."""
    shown = _shown(request, int(id))
    sid = int(shown["reblog"]["id"]) if shown["reblog"] else int(id)
    versions = edits.status_history(sid)
    if not versions:
        raise not_found()
    original = _read(request, sid)
    if original is None:
        raise not_found()
    author = (shown["reblog"] or shown)["account"]
    named = {uid for version in versions for _, uid in version.mentions}
    living = selectors.accounts_queue(request.reads, named).value if named else {}
    return entities.status_edits(
        original, versions, author, entities.Urls.of(request), set(living)
    )


def status_source(request, id: str) -> dict:
    """A status's text and warning as written, for an app's edit box (Mastodon's
    StatusSource); 404 for a status gone or hidden from the viewer."""
    shown = _shown(request, int(id))
    sid = int(shown["reblog"]["id"]) if shown["reblog"] else int(id)
    original = _read(request, sid)
    if original is None:
        raise not_found()
    return {"id": str(sid), "text": original.text, "spoiler_text": original.spoiler}


def status_context(request, id: str) -> dict:
    """What a status replies to (oldest first) and the replies below it
    (depth-first), to Mastodon's limits (`selectors.context_get`)."""
    found = selectors.context_get(reads=request.reads, sid=int(id))
    if found is None:
        raise not_found()
    shown = entities_of(request, [*found.ancestors, *found.descendants])
    by_id = {entity["id"]: entity for entity in shown}
    return {
        "ancestors": [by_id[str(s.id)] for s in found.ancestors if str(s.id) in by_id],
        "descendants": [
            by_id[str(s.id)] for s in found.descendants if str(s.id) in by_id
        ],
    }


def _shown(request, sid: int) -> dict:
    """A status as the viewer may see it (`selectors.status_get`), else 404: what
    an action answers with tells nothing of a status hidden from them (an undo
    acts on whatever it finds, `timeline.social`)."""
    return _entity(request, selectors.status_get(reads=request.reads, sid=sid))


def _react(request, id: str, change) -> dict:
    """Like, bookmark, pin or undo one (of a repost's original, but a pin), from
    the like budget; the status asked about."""
    sid = int(id)
    change(user=request.user, sid=sid, limit=limits.like(request.user.id))
    return _shown(request, sid)


def favourite(request, id: str) -> dict:
    return _react(request, id, social.status_like)


def unfavourite(request, id: str) -> dict:
    return _react(request, id, social.status_unlike)


def bookmark(request, id: str) -> dict:
    """Bookmark a status (a repost's original): the status asked about."""
    return _react(request, id, bookmarks.status_bookmark)


def unbookmark(request, id: str) -> dict:
    return _react(request, id, bookmarks.status_unbookmark)


def pin(request, id: str) -> dict:
    """Pin a status of the viewer's own to their profile: the status. Another's,
    a repost, or one past the five: 422 with the reason; gone: 404."""
    return _react(request, id, pins.status_pin)


def unpin(request, id: str) -> dict:
    return _react(request, id, pins.status_unpin)


def mute(request, id: str) -> dict:
    """Mute the conversation a status is part of (no more notifications from it):
    the status, `muted` true."""
    return _react(request, id, conversations.conversation_mute)


def unmute(request, id: str) -> dict:
    return _react(request, id, conversations.conversation_unmute)


def reblog(request, id: str) -> dict:
    """Repost a status: the repost (its `reblog` the original); again: the same."""
    user = request.user
    repost = social.status_repost(user=user, sid=int(id), limit=limits.like(user.id))
    if repost is None:
        # Reposted already: the repost there is (the original's id via the repost
        # itself, when `id` names one).
        target = social.status_target(user=user, sid=int(id))
        found = selectors.repost_id_queue(
            request.reads, uid=user.id, original_id=target.id
        ).value
        repost = _read(request, found) if found is not None else None
    return _entity(request, repost)


def unreblog(request, id: str) -> dict:
    """Undo the viewer's repost of a status: the original."""
    user = request.user
    found = selectors.status_get(reads=request.reads, sid=int(id))
    if found is None:
        raise not_found()
    original = found.repost_of if found.repost_of is not None else found.id
    social.status_unrepost(user=user, sid=original, limit=limits.like(user.id))
    return _shown(request, original)


def _reactors(request, id: str, relation: str) -> Reply:
    """Who liked or reposted a status, newest first, `limit` of them (Mastodon's:
    40, at most 80), with a Link to the next page."""
    window = Window.of(request, default=40, maximum=80)  # a bad max_id: 422
    found = selectors.reactors_page(
        reads=request.reads,
        sid=int(id),
        relation=relation,
        cursor=window.max_id - 1 if window.max_id is not None else None,
        size=window.limit,
    )
    if found is None:
        raise not_found()
    stats = selectors.accounts_queue(request.reads, [u.id for u in found.users])
    body = entities.accounts(found.users, stats.value, entities.Urls.of(request))
    headers = link_header(
        request,
        next_max_id=found.next_cursor + 1 if found.next_cursor is not None else None,
        prev_min_id=None,
    )
    return Reply(body, headers=headers)


def quotes_index(request, id: str) -> Reply:
    """The statuses quoting a status that the viewer may see, newest first
    (Mastodon 4.5's `GET /api/v1/statuses/:id/quotes`: `limit` 20, at most 40,
    `max_id`, `since_id`, and `min_id` as elsewhere), with Links to the older and
    the newer page; 404 when the status is gone or hidden."""
    window = Window.of(request, default=20, maximum=40)
    if not id.isdecimal() or len(id) > 19:
        raise not_found()
    found = selectors.quotes_get(
        reads=request.reads,
        sid=int(id),
        max_id=window.max_id,
        floor=window.floor,
        from_oldest=window.from_oldest,
        limit=window.limit,
    )
    if found is None:
        raise not_found()
    headers = link_header(
        request, next_max_id=found.next_max_id, prev_min_id=found.prev_min_id
    )
    return Reply(entities_of(request, found.statuses), headers=headers)


def quote_revoke(request, id: str, quoting_id: str) -> dict:
    """The quoted status's author detaches a quote of it (Mastodon 4.5's
    `POST /api/v1/statuses/:id/quotes/:quoting_status_id/revoke`): answers the
    quoting status, its quote `revoked`; 404 when the status is hidden from you or
    that one does not quote it, or (revoked all the same) when you may not see
    it; 403 when it is not yours (Mastodon's QuotePolicy, through the domain
    error's mapping)."""
    if (
        not (id.isdecimal() and quoting_id.isdecimal())
        or max(len(id), len(quoting_id)) > 19
    ):
        raise not_found()
    try:
        quotes.quote_revoke(user=request.user, sid=int(id), quoting_id=int(quoting_id))
    except NotFound as error:
        raise not_found() from error
    # Answered as the caller may see it: a quote hidden from them (a direct
    # message to others, a private account's, its author's block) is revoked all
    # the same, and answered 404, nothing of it shown.
    return _entity(
        request, selectors.status_get(reads=request.reads, sid=int(quoting_id))
    )


def favourited_by(request, id: str) -> Reply:
    return _reactors(request, id, "likes")


def reblogged_by(request, id: str) -> Reply:
    return _reactors(request, id, "reposts")


READ = "read:statuses"
WRITE = "write:statuses"
statuses = endpoint(POST=Op(status_create, scope=WRITE))
status = endpoint(
    GET=Op(status_show, scope=READ, auth=OPTIONAL),
    PUT=Op(status_update, scope=WRITE),
    DELETE=Op(status_remove, scope=WRITE),
)
history = endpoint(GET=Op(status_history, scope=READ, auth=OPTIONAL))
scheduled_statuses = endpoint(GET=Op(scheduled_index, scope=READ))
scheduled_status = endpoint(
    GET=Op(scheduled_show, scope=READ),
    PUT=Op(scheduled_update, scope=WRITE),
    DELETE=Op(scheduled_remove, scope=WRITE),
)
source = endpoint(GET=Op(status_source, scope=READ))
context = endpoint(GET=Op(status_context, scope=READ, auth=OPTIONAL))
favourite_view = endpoint(POST=Op(favourite, scope="write:favourites"))
unfavourite_view = endpoint(POST=Op(unfavourite, scope="write:favourites"))
bookmark_view = endpoint(POST=Op(bookmark, scope="write:bookmarks"))
unbookmark_view = endpoint(POST=Op(unbookmark, scope="write:bookmarks"))
pin_view = endpoint(POST=Op(pin, scope="write:accounts"))
unpin_view = endpoint(POST=Op(unpin, scope="write:accounts"))
mute_view = endpoint(POST=Op(mute, scope="write:mutes"))
unmute_view = endpoint(POST=Op(unmute, scope="write:mutes"))
reblog_view = endpoint(POST=Op(reblog, scope=WRITE))
unreblog_view = endpoint(POST=Op(unreblog, scope=WRITE))
favourited_by_view = endpoint(
    GET=Op(favourited_by, scope="read:accounts", auth=OPTIONAL)
)
quotes_view = endpoint(GET=Op(quotes_index, scope=READ, auth=OPTIONAL))
quote_revoke_view = endpoint(POST=Op(quote_revoke, scope=WRITE))
reblogged_by_view = endpoint(GET=Op(reblogged_by, scope="read:accounts", auth=OPTIONAL))
