"""Office tools: e-mail."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from replan.core import linre
from replan.env.corpus.office import facts
from replan.env.corpus.office.facts import OWNER
from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


@implementation
def send_email(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    mid = ctx.new_id("msg").lower()
    return {"message_id": mid, "to": args["to"], "error_code": 0, "message": "OK"}


@implementation
def create_email_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "draft_id": ctx.new_id("r").replace("-", "").lower(),
        "message": {"to": args["recipient"], "subject": args["subject"]},
    }


@implementation
def send_email_draft(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    mid = ctx.new_id("msg").lower()
    return {"id": mid, "thread_id": mid.replace("msg-", "thr-"), "label_ids": ["SENT"]}


def _mail_matches(msg: Mapping[str, Any], token: str) -> bool:
    low = token.lower()
    if ":" in low:
        op, val = low.split(":", 1)
        if op == "from":
            return val in msg["from"].lower()
        if op == "subject":
            return val in msg["subject"].lower()
        if op == "is":
            return {"unread": "UNREAD", "starred": "STARRED", "important": "IMPORTANT"}.get(
                val, "?"
            ) in msg["labels"]
        if op == "label":
            return val.upper() in msg["labels"]
    return low in f"{msg['from']} {msg['subject']} {msg['body']}".lower()


def _search_inbox(ctx: ToolContext, q: str, labels: list[str]) -> list[str]:
    """Ids of inbox messages matching every query token and label, newest first."""
    tokens = q.split()
    hits = [
        (msg["date"], mid)
        for mid, msg in ctx.state.records("office_inbox").items()
        if all(_mail_matches(msg, tk) for tk in tokens)
        and all(lb in msg["labels"] for lb in labels)
    ]
    return [mid for _, mid in sorted(hits, reverse=True)]


@implementation
def search_mailbox(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    hits = _search_inbox(ctx, args["q"], args.get("label_ids", []))
    return {
        "messages": [{"id": mid, "thread_id": mid} for mid in hits[: args.get("max_results", 20)]],
        "result_size_estimate": len(hits),
    }


@implementation
def list_mail_threads(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    hits = _search_inbox(ctx, args["query"], [])
    inbox = ctx.state.records("office_inbox")
    return {
        "threads": [
            {"id": mid, "snippet": inbox[mid]["body"][:80]}
            for mid in hits[: args.get("maxResults", 100)]
        ],
        "resultSizeEstimate": len(hits),
    }


@implementation
def get_mail_thread(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tid = args["thread_id"]
    first = facts.state_or_404(ctx, "office_inbox", tid)
    msgs = [
        {
            "id": tid,
            "sender": first["from"],
            "subject": first["subject"],
            "snippet": first["body"][:80],
        }
    ]
    for mid, sent in sorted(ctx.state.records("office_sent_mail").items()):
        if sent.get("in_reply_to") == tid:
            msgs.append(
                {
                    "id": mid,
                    "sender": OWNER,
                    "subject": sent["subject"],
                    "snippet": sent["body"][:80],
                }
            )
    return {"id": tid, "messages": msgs}


@implementation
def get_email_message(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msg = facts.state_or_404(ctx, "office_inbox", args["message_id"])
    fmt = args.get("format", "full")
    payload: dict[str, Any] = {"from": msg["from"], "subject": msg["subject"], "date": msg["date"]}
    if fmt == "full":
        payload["body"] = msg["body"]
    return {
        "id": args["message_id"],
        "thread_id": args["message_id"],
        "label_ids": list(msg["labels"]),
        "snippet": "" if fmt == "minimal" else msg["body"][:80],
        "payload": payload,
    }


@implementation
def reply_to_email(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msg = facts.state_or_404(ctx, "office_inbox", args["message_id"])
    subject = msg["subject"] if msg["subject"].startswith("Re: ") else f"Re: {msg['subject']}"
    return {
        "id": ctx.new_id("msg").lower(),
        "thread_id": args["message_id"],
        "to": msg["from"],
        "subject": subject,
    }


#: a sentence's end: the text splits at the whitespace (group 1) after the mark
_SENTENCE_END = linre.compile(r"[.!?](\s+)")
_ACTION_CUES = linre.compile(
    r"\b(please|can we|could you|needs?|confirm|review|send|book|"
    r"prepare|due|follow up|let me know)\b",
    linre.IGNORECASE,
)
_WEEKDAYS = facts.SEEDS.table("weekdays", list[str])


@implementation
def extract_action_items(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    items = []
    for sentence in linre.split_after(_SENTENCE_END, args["text"].strip()):
        if not _ACTION_CUES.search(sentence):
            continue
        task = linre.sub(
            r"^(please|hi \w+,|can we|could you)\s+", "", sentence.strip(), flags=linre.IGNORECASE
        ).rstrip(".!? ")
        if not task:
            continue
        item: dict[str, Any] = {"task": (task[0].upper() + task[1:])[:120]}
        date = linre.search(r"\b(20[0-9]{2}-[01][0-9]-[0-3][0-9])\b", sentence)
        if date:
            item["due_date"] = date.group(1)
        day = next((d for d in _WEEKDAYS if d in sentence.lower()), None)
        if day:
            item["due_weekday"] = day
        items.append(item)
    return {"items": items, "count": len(items)}
