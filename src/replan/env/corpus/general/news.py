"""General tools: news, web search, pages."""

from __future__ import annotations

import datetime as dt
from typing import Any

from replan.core import linre
from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_NEWS_SOURCES = facts.SEEDS.table("news_sources", list[tuple[str, str, str]])
_HEADLINES = facts.SEEDS.table("headlines", list[str])
_AUTHORS = facts.SEEDS.table("authors", list[str])


def _slug(text: str) -> str:
    return linre.sub(r"[^a-z0-9]+", "-", facts.fold(text)).strip("-")


def _title_from_slug(slug: str) -> str:
    words = slug.replace("_", "-").split("-")
    text = " ".join(w for w in words if w)
    return text[:1].upper() + text[1:]


_HEADLINE_RES = [
    linre.compile("^" + linre.escape(_slug(h.format(q="qqqq"))).replace("qqqq", "(.+)") + "$")
    for h in _HEADLINES
]


def _topic(slug: str) -> str:
    """The subject of a page slug: the query inside a generated headline, else the slug."""
    for rx in _HEADLINE_RES:
        m = rx.match(slug)
        if m:
            return m.group(1).replace("-", " ")
    return slug.replace("-", " ")


def _news(ctx: ToolContext, query: str, lang: str) -> list[dict[str, Any]]:
    q = " ".join(query.split())
    if not _slug(q):
        raise InvalidValue("q", "the query has no searchable words")
    start = ctx.pick(f"gen:news:{facts.fold(q)}:{lang}", list(range(len(_HEADLINES))))
    out = []
    for i in range(5):
        key = f"gen:news:{facts.fold(q)}:{lang}:{i}"
        slug = _slug(_HEADLINES[(start + 3 * i) % len(_HEADLINES)].format(q=q))
        src = ctx.pick(key + ":src", _NEWS_SOURCES)
        published = facts.NOW - dt.timedelta(
            hours=5 + 17 * i + int(ctx.number(key + ":h", 0, 11, 0))
        )
        out.append(
            {
                "source_id": src[0],
                "source": src[1],
                "domain": src[2],
                "author": ctx.pick(key + ":a", _AUTHORS),
                "title": _title_from_slug(slug),
                "description": f"{_title_from_slug(_slug(q))}: reporting from {src[1]}.",
                "url": f"https://www.{src[2]}/{published:%Y/%m/%d}/{slug}",
                "published": published.strftime("%Y-%m-%dT%H:%M:%SZ"),
            }
        )
    return out


_NEWS_LANGS = facts.SEEDS.table("news_langs", list[str])
#: a sentence's end: the text splits at the whitespace (group 1) after the mark
_SENTENCE_END = linre.compile(r"[.!?。](\s+)")


@implementation
def newsapi_everything(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    arts = _news(ctx, args["q"], args.get("language", "en"))
    if "from" in args:
        arts = [a for a in arts if a["published"][:10] >= args["from"]]
    arts = arts[: args.get("pageSize", 100)]
    return {
        "status": "ok",
        "totalResults": len(arts),
        "articles": [
            {
                "source": {"id": a["source_id"], "name": a["source"]},
                "author": a["author"],
                "title": a["title"],
                "description": a["description"],
                "url": a["url"],
                "publishedAt": a["published"],
            }
            for a in arts
        ],
    }


@implementation
def gnews_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lang = args.get("lang", "en")
    if lang not in _NEWS_LANGS:
        raise InvalidValue("lang", f"language {lang!r} is not supported")
    arts = _news(ctx, args["query"], lang)[: args.get("max", 10)]
    return {
        "totalArticles": len(arts),
        "articles": [
            {
                "title": a["title"],
                "description": a["description"],
                "url": a["url"],
                "image": f"https://cdn.{a['domain']}/img/{a['url'].rsplit('/', 1)[1][:32]}.jpg",
                "publishedAt": a["published"],
                "source": {"name": a["source"], "url": f"https://www.{a['domain']}"},
            }
            for a in arts
        ],
    }


_WEB_SITES = facts.SEEDS.table("web_sites", list[tuple[str, str]])


def _web_results(ctx: ToolContext, query: str) -> list[dict[str, Any]]:
    q = " ".join(query.split())
    slug = _slug(q)
    if not slug:
        raise InvalidValue("q", "the query has no searchable words")
    topic = q[:1].upper() + q[1:]
    scored = sorted(
        _WEB_SITES, key=lambda st: -ctx.number(f"gen:web:{facts.fold(q)}:{st[0]}", 0, 1, 6)
    )
    out = []
    for host, style in scored[:6]:
        if style == "wiki":
            url, title = f"https://{host}/wiki/{topic.replace(' ', '_')}", f"{topic} - Wikipedia"
        elif style == "thread":
            url = f"https://{host}/r/{slug.split('-')[0]}/comments/{slug[:6]}/{slug}"
            title = f"{_title_from_slug(slug)} : r/{slug.split('-')[0]}"
        elif style == "video":
            url, title = f"https://{host}/watch?v={slug[:11]}", f"{topic} explained - YouTube"
        else:
            url, title = f"https://{host}/{style}/{slug}", _title_from_slug(slug)
        out.append(
            {
                "title": title,
                "url": url,
                "host": host,
                "snippet": f"Everything you need to know about {q}, from {host}.",
            }
        )
    return out


@implementation
def google_custom_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    res = _web_results(ctx, args["q"])[: args.get("num", 10)]
    total = int(ctx.number("gen:web:total:" + facts.fold(args["q"]), 1e4, 5e7, 0))
    return {
        "searchInformation": {"totalResults": str(total), "searchTime": 0.31},
        "items": [
            {
                "title": r["title"],
                "link": r["url"],
                "displayLink": r["host"],
                "snippet": r["snippet"],
            }
            for r in res
        ],
    }


@implementation
def bing_web_search(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    res = _web_results(ctx, args["query"])[: args.get("count", 10)]
    total = int(ctx.number("gen:web:total:" + facts.fold(args["query"]), 1e4, 5e7, 0))
    return {
        "webPages": {
            "totalEstimatedMatches": total,
            "value": [
                {"name": r["title"], "url": r["url"], "snippet": r["snippet"], "language": "en"}
                for r in res
            ],
        }
    }


_PAGE_SENTENCES = facts.SEEDS.table("page_sentences", list[str])


@implementation
def fetch_webpage(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    url = args["url"]
    m = linre.match(r"^https?://([^/?#]+)([^?#]*)", url)
    if not m or "." not in m.group(1):
        raise InvalidValue("url", f"cannot resolve host of {url!r}")
    path = m.group(2).rstrip("/")
    if "/wiki/" in path:
        title = path.rsplit("/wiki/", 1)[1].replace("_", " ")
        topic = title
    else:
        last = _slug(path.rsplit("/", 1)[-1] if path else "")
        title = _title_from_slug(last) if last else m.group(1).removeprefix("www.")
        topic = _topic(last) if last else title
    start = ctx.pick("gen:page:" + url, list(range(len(_PAGE_SENTENCES))))
    n_sent = 4 + int(ctx.number("gen:page:len:" + url, 0, 3, 0))
    sentences = [
        _PAGE_SENTENCES[(start + 3 * i) % len(_PAGE_SENTENCES)].format(
            T=topic[:1].upper() + topic[1:],
            t=topic,
            n=int(ctx.number(f"gen:page:{url}:n", 4, 38, 0)),
        )
        for i in range(n_sent)
    ]
    text = " ".join(sentences)
    return {
        "url": url,
        "status_code": 200,
        "title": title,
        "text": text,
        "word_count": len(text.split()),
        "language": "en",
    }


_STOP = facts.SEEDS.table("stop", set[str])


@implementation
def textrank_summarize(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    sents = [x.strip() for x in linre.split_after(_SENTENCE_END, args["text"].strip()) if x.strip()]
    if not sents:
        raise InvalidValue("text", "no sentences to summarise")
    freq: dict[str, int] = {}
    for w in linre.findall(r"[\w']+", args["text"].lower()):
        if w not in _STOP and len(w) > 2:
            freq[w] = freq.get(w, 0) + 1

    def score(sent: str) -> float:
        words = [w for w in linre.findall(r"[\w']+", sent.lower()) if w in freq]
        return sum(freq[w] for w in words) / (len(words) + 1)

    keep = sorted(
        sorted(range(len(sents)), key=lambda i: (-score(sents[i]), i))[
            : args.get("max_sentences", 2)
        ]
    )
    keywords = sorted(freq, key=lambda w: (-freq[w], w))[:5]
    return {
        "summary": " ".join(sents[i] for i in keep),
        "sentences_in": len(sents),
        "sentences_out": len(keep),
        "keywords": keywords,
    }
