"""Reports (`timeline.reports`): POST /api/v1/reports, as Mastodon answers it.

`forward` is read and ignored (no federation: every account is local). This site
has no rules (`/api/v1/instance/rules` is empty), so `rule_ids` can name none and
the `violation` category, which Mastodon accepts only with valid rules, is refused
as Mastodon refuses it without them (422). Reporting oneself is a 422, as the site's
form refuses it: Mastodon's Report has no such check (its web app offers no Report
on one's own account, its API would file one).
"""

from __future__ import annotations

from accounts import limits
from api import entities
from api.http import (
    Op,
    endpoint,
    iso,
    not_found,
    param,
    param_list,
    params,
    text_param,
    unprocessable,
)
from timeline import reports
from timeline.selectors import accounts_queue

ID_DIGITS = 19


def _id(value: str | None) -> int:
    """An account's or status's id; anything else names none (Mastodon's 404)."""
    if not value or not value.isdecimal() or len(value) > ID_DIGITS:
        raise not_found()
    return int(value)


def report_entity(request, filed: reports.Report) -> dict:
    """The Report entity (one round trip for its target's Account)."""
    found = accounts_queue(request.reads, [filed.target_id]).value
    target = found.get(filed.target_id)
    return {
        "id": str(filed.id),
        "action_taken": filed.settled is not None,
        "action_taken_at": iso(filed.settled) if filed.settled else None,
        "category": filed.category,
        "comment": filed.comment,
        "forwarded": False,
        "created_at": iso(filed.created),
        "status_ids": [str(sid) for sid in filed.status_ids],
        "rule_ids": None,
        "target_account": entities.account(target, entities.Urls.of(request))
        if target is not None
        else None,
    }


def report_create(request) -> dict:
    """File a report: 404 for an unknown account or a status not among its visible
    ones, 422 for a bad field (Mastodon's messages), 429 past RATE_LIMIT_REPORT."""
    values = params(request)
    target_id = _id(param(values, "account_id"))
    status_ids = [_id(v) for v in param_list(values, "status_ids")]
    if param_list(values, "rule_ids"):
        raise unprocessable("Rule ids does not reference valid rules")
    category = param(values, "category") or "other"
    if category == "violation":
        raise unprocessable("Rule ids does not reference valid rules")
    if category not in reports.CATEGORIES:
        raise unprocessable("Category is not included in the list")
    comment = text_param(values, "comment") or ""
    if len(comment) > reports.COMMENT_MAX:
        raise unprocessable(
            f"Comment is too long (maximum is {reports.COMMENT_MAX} characters)"
        )
    filed = reports.report_file(
        reporter=request.user,
        target_id=target_id,
        category=category,
        comment=comment,
        status_ids=status_ids,
        limit=limits.report(request.user.id),
    )
    return report_entity(request, filed)


create = endpoint(POST=Op(report_create, scope="write:reports"))
