"""Office tools: documents."""

from __future__ import annotations

from typing import Any

from replan.core import linre
from replan.env.corpus.office import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext


@implementation
def create_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    did = ctx.new_id("DOC")
    return {
        "document_id": did,
        "title": args["title"],
        "revision_id": "rev-1",
        "url": f"https://docs.example.com/d/{did}/edit",
    }


@implementation
def share_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = facts.state_or_404(ctx, "office_documents", args["file_id"])
    if args["email_address"] == doc.get("owner"):
        raise InvalidValue("email_address", "the owner already has full access")
    return {
        "permission_id": ctx.new_id("perm").lower(),
        "type": "user",
        "role": args["role"],
        "email_address": args["email_address"],
    }


@implementation
def get_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = facts.state_or_404(ctx, "office_documents", args["document_id"])
    return {
        "document_id": args["document_id"],
        "title": doc["title"],
        "revision_id": doc.get("revision_id", "rev-1"),
        "body": {"content": doc["content"]},
    }


@implementation
def count_text_words(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    text = args["text"]
    return {
        "words": facts.words(text),
        "characters": len(text),
        "sentences": len(linre.findall(r"[.!?。]+(\s|$)", text)),
    }


@implementation
def get_document_stats(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    text = facts.state_or_404(ctx, "office_documents", args["document_id"])["content"]
    return {
        "document_id": args["document_id"],
        "word_count": facts.words(text),
        "character_count": len(text),
        "paragraph_count": len([p for p in text.split("\n") if p.strip()]),
    }


@implementation
def search_drive_files(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    words = args["q"].lower().split()
    files = []
    for did, doc in sorted(ctx.state.records("office_documents").items()):
        trashed = doc["status"] != "active"
        if trashed and not args.get("include_trashed", False):
            continue
        hay = f"{doc['title']} {doc['content']}".lower()
        if all(w in hay for w in words):
            # title hits rank first
            files.append((not all(w in doc["title"].lower() for w in words), did, doc, trashed))
    files.sort(key=lambda f: (f[0], f[1]))
    return {
        "files": [
            {"id": did, "name": doc["title"], "trashed": tr}
            for _, did, doc, tr in files[: args.get("page_size", 20)]
        ]
    }


_EXPORT_TYPES = facts.SEEDS.table("export_types", dict[str, tuple[str, float]])


@implementation
def export_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    doc = facts.state_or_404(ctx, "office_documents", args["file_id"])
    ext, factor = _EXPORT_TYPES[args["mime_type"]]
    size = int(len(doc["content"].encode()) * factor) + {"pdf": 9000, "txt": 0, "docx": 4200}[ext]
    return {
        "export_link": f"https://docs.example.com/export/{args['file_id']}.{ext}",
        "size_bytes": max(1, size),
        "mime_type": args["mime_type"],
    }


@implementation
def trash_document(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    return {"id": args["file_id"], "trashed": True}
