"""General tools: language."""

from __future__ import annotations

from typing import Any

from replan.core import linre
from replan.env.corpus.general import facts
from replan.env.corpus.registry import implementation
from replan.env.world import InvalidValue, ToolContext

_PHRASES = facts.SEEDS.table("phrases", list[dict[str, str]])
_PHRASE_INDEX = {
    facts.fold(v): (i, lang) for i, row in enumerate(_PHRASES) for lang, v in row.items()
}
_STOPWORDS = facts.SEEDS.table("stopwords", dict[str, set[str]])


def _detect(text: str) -> tuple[str, float]:
    hit = _PHRASE_INDEX.get(facts.fold(text))
    if hit is not None:
        return hit[1], 0.99
    if linre.search(r"[\u3040-\u30ff\u4e00-\u9fff]", text):
        return "ja", 0.97
    low = text.lower()
    if linre.search(r"[ąćęłńśźż]", low):
        return "pl", 0.93
    words = linre.findall(r"[\w'’]+", low)
    scores = {lang: sum(w in sw for w in words) for lang, sw in _STOPWORDS.items()}
    for lang, pat in (("pt", r"[ãõç]"), ("de", r"[äöüß]"), ("es", r"[ñ¿¡]"), ("fr", r"[èêœ]")):
        if linre.search(pat, low):
            scores[lang] += 2
    best = max(scores, key=lambda k: (scores[k], k == "en"))
    if scores[best] == 0:
        return "en", 0.51
    return best, round(min(0.95, 0.55 + 0.1 * scores[best]), 2)


def _translate(text: str, target: str, source: str | None) -> tuple[str, str]:
    detected = source or _detect(text)[0]
    if detected == target:
        return text, detected
    hit = _PHRASE_INDEX.get(facts.fold(text))
    if hit is not None and target in _PHRASES[hit[0]]:
        return _PHRASES[hit[0]][target], detected
    return f"[{target}] {text}", detected


@implementation
def google_translate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    out, src = _translate(args["q"], args["target"], args.get("source"))
    return {"data": {"translations": [{"translatedText": out, "detectedSourceLanguage": src}]}}


@implementation
def deepl_translate(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    if args.get("formality", "default") != "default" and args["target_lang"] in ("en", "ja"):
        raise InvalidValue("formality", f"formality is not supported for {args['target_lang']}")
    out, src = _translate(args["text"], args["target_lang"], args.get("source_lang"))
    return {"translations": [{"detected_source_language": src, "text": out}]}


@implementation
def google_detect_language(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    lang, conf = _detect(args["q"])
    return {"language": lang, "confidence": conf, "isReliable": conf >= 0.8}


_DICTIONARY = facts.SEEDS.table("dictionary", dict[str, tuple[str, str, str, str, str]])


@implementation
def free_dictionary_lookup(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    entry = _DICTIONARY.get(facts.fold(args["word"]))
    if entry is None:
        raise InvalidValue("word", f"No Definitions Found for {args['word']!r}")
    lang, phon, pos, definition, example = entry
    if "language" in args and args["language"] != lang:
        raise InvalidValue(
            "language",
            f"{args['word']!r} is not in the {args['language']} dictionary (found in {lang})",
        )
    return {
        "entries": [
            {
                "word": args["word"],
                "language": lang,
                "phonetic": phon,
                "meanings": [
                    {
                        "partOfSpeech": pos,
                        "definitions": [{"definition": definition, "example": example}],
                    }
                ],
                "sourceUrls": [f"https://en.wiktionary.org/wiki/{facts.fold(args['word'])}"],
            }
        ]
    }
