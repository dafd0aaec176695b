"""Office tools: chat (Slack-like)."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.office import facts
from replan.env.corpus.office.facts import BOT_USER
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


def _chat_user(email: str) -> dict[str, Any]:
    if email not in facts.CHAT_USERS:
        raise InvalidValue("email", f"users_not_found: no workspace member with e-mail {email}")
    return facts.CHAT_USERS[email]


def _ts(ctx: ToolContext) -> str:
    n = int(ctx.new_id("T")[2:], 16)
    return f"{1764600000 + n % 9000000}.{n % 1000000:06d}"


def _dm_channel(user_id: str) -> str:
    return "D" + user_id[1:]


@implementation
def lookup_slack_user(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    u = _chat_user(args["email"])
    return {
        "ok": True,
        "user": {
            "id": u["id"],
            "name": u["name"],
            "real_name": u["real_name"],
            "tz": facts.CONTACT_TZ[u["city"]],
        },
    }


@implementation
def open_slack_conversation(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args["users"] not in facts.CHAT_USER_BY_ID:
        raise InvalidValue("users", f"user_not_found: {args['users']}")
    cid = _dm_channel(args["users"])
    return {
        "ok": True,
        "already_open": ctx.state.get("office_chat_channels", cid) is not None,
        "channel": {"id": cid, "is_im": True},
    }


@implementation
def post_slack_message(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if "thread_ts" in args:
        parent = ctx.state.get("office_chat_messages", args["thread_ts"])
        if parent is None or parent["channel"] != args["channel"]:
            raise InvalidValue("thread_ts", "thread_not_found in this channel")
    return {
        "ok": True,
        "channel": args["channel"],
        "ts": _ts(ctx),
        "message": {"text": args["text"], "user": BOT_USER},
    }


@implementation
def send_slack_dm(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    u = _chat_user(args["email"])
    return {"ok": True, "channel": _dm_channel(u["id"]), "ts": _ts(ctx)}


@implementation
def add_slack_reaction(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msg = facts.state_or_404(ctx, "office_chat_messages", args["timestamp"])
    if args.get("channel", msg["channel"]) != msg["channel"]:
        raise InvalidValue("channel", "message_not_found in this channel")
    have = list(msg.get("reactions") or [])
    if args["name"] in have:
        raise InvalidValue("name", "already_reacted")
    return {"ok": True, "channel": msg["channel"], "reactions": [*have, args["name"]]}


@implementation
def get_slack_channel_history(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    msgs = sorted(
        (
            (ts, m)
            for ts, m in ctx.state.records("office_chat_messages").items()
            if m["channel"] == args["channel"]
        ),
        key=lambda x: float(x[0]),
        reverse=True,
    )
    limit = args.get("limit", 20)
    return {
        "ok": True,
        "channel": args["channel"],
        "has_more": len(msgs) > limit,
        "messages": [{"ts": ts, "user": m["user"], "text": m["text"]} for ts, m in msgs[:limit]],
    }
