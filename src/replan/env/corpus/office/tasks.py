"""Office tools: tasks."""

from __future__ import annotations

from typing import Any

from replan.env.corpus.registry import implementation
from replan.env.world import ToolContext


@implementation
def create_todoist_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    tid = ctx.new_id("TSK")
    return {
        "id": tid,
        "content": args["content"],
        "due": {"date": args["due_date"], "is_recurring": False},
        "priority": args.get("priority", 1),
        "url": f"https://todo.example.com/task/{tid}",
    }


@implementation
def add_microsoft_todo(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {
        "id": ctx.new_id("TSK"),
        "title": args["title"],
        "status": "notStarted",
        "importance": args.get("importance", "normal"),
        "dueDateTime": {"dateTime": f"{args['due_on']}T00:00:00", "timeZone": "UTC"},
    }


@implementation
def complete_task(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    left = sum(
        1
        for k, t in ctx.state.records("office_tasks").items()
        if t["status"] == "open" and k != args["task_id"]
    )
    return {"id": args["task_id"], "is_completed": True, "open_tasks_left": left}


@implementation
def list_tasks(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    want = args.get("status", "open")
    tasks = [
        {"id": k, "title": t["title"], "due_date": t["due_date"], "status": t["status"]}
        for k, t in ctx.state.records("office_tasks").items()
        if (want == "all" or t["status"] == want)
        and ("due_before" not in args or t["due_date"] < args["due_before"])
    ]
    tasks.sort(key=lambda t: (t["due_date"], t["id"]))
    return {"tasks": tasks, "count": len(tasks)}
