"""Suites as versions: every suite a run draws from has a name, a version and a content digest.

``versions.json`` pins, per generated suite, its version, the digest of the whole default suite,
the options that define that content (``defaults``) and why the version last changed. A
generated suite may also be *frozen*: ``data/<suite>-v<version>.jsonl.gz`` holds its instances
(one Task JSON a line, in generation order, gzip without a timestamp), so it loads without
regenerating, and ``data/<suite>-v<version>.stats.json`` its ``replan suites stats`` figures,
so that they are read, not counted from every instance. The files are built, never edited:
``python -m replan.suites freeze toolmaze`` regenerates the suite and writes them, and refuses
when the content changed unless given ``--bump REASON`` (the next version, its digest and the
reason are pinned, the old files removed).
A slow test regenerates each suite and checks it reproduces the pinned digest, so a corpus or
generator change cannot slip in under an old version.
"""

from __future__ import annotations

import gzip
import hashlib
import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from replan.core.task import Task

#: the pinned version, digest, defining options and last change of each suite
VERSIONS_FILE = Path(__file__).with_name("versions.json")
#: where frozen suites live (inside the package, so an installed replan carries them)
DATA_DIR = Path(__file__).with_name("data")
#: the version of tasks a caller handed to a run instead of a suite's (``replan.run(tasks=...)``)
CUSTOM = "custom"
#: a suite's statistics of its instances (the ``replan suites stats --json`` figures)
StatsOf = Callable[[Sequence[Task]], dict[str, Any]]


def suite_versions() -> dict[str, dict[str, Any]]:
    """``{suite: {"version", "digest", "instances", "defaults", "reason"}}`` from ``versions.json``.

    The digest there is of the whole default suite (``toolmaze``: all 2,000 instances;
    ``pararecover-synth``: all 799). A change to the corpus or a generator changes it; a test
    regenerates each suite and fails until the version is bumped and the new digest pinned, so
    results from before and after a change are never taken for the same suite.
    """
    return json.loads(VERSIONS_FILE.read_text(encoding="utf-8"))


def suite_version(name: str) -> str:
    """The pinned version of suite ``name`` (``"1"`` for a suite with no entry)."""
    return str(suite_versions().get(name, {}).get("version", "1"))


def suite_digest(tasks: Iterable[Task]) -> str:
    """Content digest of task instances: sha256 (first 16 hex digits) over each task's canonical
    JSON, in task-id order. Two runs whose tasks share a digest asked the agents the same thing,
    with the same tools, faults and checker; different digests are not comparable silently."""
    h = hashlib.sha256()
    for t in sorted(tasks, key=lambda t: t.task_id):
        h.update(json.dumps(t.model_dump(mode="json"), sort_keys=True).encode())
        h.update(b"\n")
    return h.hexdigest()[:16]


def suite_identity(
    name: str, tasks: Sequence[Task], options: Mapping[str, Any] | None = None
) -> dict[str, str]:
    """``{"name", "version", "digest"}`` of the suite ``tasks`` were loaded from with ``options``.

    A pinned suite whose defining options (``defaults`` in ``versions.json``, e.g. the seed) are
    at their pinned values is its pinned version and digest, whatever subset was loaded. Other
    values make a variant, ``"1+seed=3"``, whose digest hashes the pinned digest with them
    (generation is deterministic, so they fix the content). ``options["version"]`` naming an
    earlier, kept version (:func:`earlier_pin`) identifies that version and its digest. A suite
    with no pinned digest (a ParaRecover data file) is identified by the digest of ``tasks``,
    all that was loaded.
    """
    pin = suite_versions().get(name, {})
    version = str(pin.get("version", "1"))
    if not pin.get("digest"):
        return {"name": name, "version": version, "digest": suite_digest(tasks)}
    options = options or {}
    older = options.get("version")
    if older not in (None, "", version):
        pin = {**pin, **earlier_pin(name, str(older))}
        version = str(older)
    changed = {
        k: options[k]
        for k, default in sorted(pin.get("defaults", {}).items())
        if k in options and str(options[k]) != str(default)
    }
    if not changed:
        return {"name": name, "version": version, "digest": pin["digest"]}
    variant = ",".join(f"{k}={v}" for k, v in changed.items())
    digest = hashlib.sha256(f"{pin['digest']}|{variant}".encode()).hexdigest()[:16]
    return {"name": name, "version": f"{version}+{variant}", "digest": digest}


def custom_identity(name: str, tasks: Sequence[Task]) -> dict[str, str]:
    """The identity of tasks handed to a run directly: version ``custom``, their own digest."""
    return {"name": name, "version": CUSTOM, "digest": suite_digest(tasks)}


def identity_label(ident: Mapping[str, Any]) -> str:
    """``toolmaze v2 (aa36ad3d)``: name, version and short digest, for headers and messages."""
    return f"{ident.get('name')} v{ident.get('version')} ({str(ident.get('digest', ''))[:8]})"


# -- frozen suites ------------------------------------------------------------------------------
def frozen_path(name: str, version: str | None = None) -> Path:
    """The data file of suite ``name`` at ``version`` (default: the pinned one); may not exist."""
    return DATA_DIR / f"{name}-v{version or suite_version(name)}.jsonl.gz"


#: how every line of a frozen file starts (``Task.task_id`` is the model's first field), so a
#: subset is read by id without parsing the other lines (about 14 KB each)
LINE_PREFIX = '{"task_id":"'


def frozen_file(name: str, options: Mapping[str, Any]) -> Path | None:
    """The frozen data file of suite ``name`` when ``options`` give its defining options (the
    pinned ``defaults``; one not given counts as its default) their pinned values and the file
    exists; ``None`` otherwise (the suite is generated). ``options["version"]``, an earlier
    version (:func:`earlier_pin`), names that version's kept file instead (a ``ValueError`` when
    it is not kept: the generator now gives the pinned version only)."""
    if _pinned(name, options) is None:
        return None
    older = options.get("version")
    if older not in (None, "", suite_version(name)):
        earlier_pin(name, str(older))
        path = frozen_path(name, str(older))
        if not path.is_file():
            raise ValueError(f"suite {name!r} version {older}: its data file {path} is missing")
        return path
    path = frozen_path(name)
    return path if path.is_file() else None


def earlier_pin(name: str, version: str) -> dict[str, Any]:
    """``{"digest", "instances", "reason"}`` of an earlier, kept version of suite ``name``
    (``versions.json`` keeps them under ``earlier`` when a version is bumped, and their data
    files stay in ``data/``), so that results run on it can be loaded and compared again;
    a ``ValueError`` naming the kept versions when ``version`` is not one."""
    pin = suite_versions().get(name, {})
    kept = pin.get("earlier", {})
    if version not in kept:
        known = ", ".join([*sorted(kept), f"{pin.get('version', '1')} (pinned)"])
        raise ValueError(f"suite {name!r} has no version {version!r}; kept versions: {known}")
    return {"version": version, **kept[version]}


def _pinned(name: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """Suite ``name``'s pin when it has a digest and ``options`` give its defining options their
    pinned values (one not given counts as its default): the frozen content; else ``None``."""
    pin = suite_versions().get(name, {})
    defaults = pin.get("defaults", {})
    if not pin.get("digest") or any(str(options.get(k, d)) != str(d) for k, d in defaults.items()):
        return None
    return pin


def write_frozen(path: Path, tasks: Sequence[Task]) -> None:
    """Write ``tasks`` in order, one compact JSON a line, gzip-compressed with no timestamp (the
    same tasks give the same bytes)."""
    lines = [t.model_dump_json() for t in tasks]
    for t, line in zip(tasks, lines, strict=True):
        if not line.startswith(LINE_PREFIX + t.task_id + '"'):
            raise ValueError(f"task {t.task_id!r}: its JSON does not start with its id")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    with tmp.open("wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as fh:
        fh.write("".join(line + "\n" for line in lines).encode("utf-8"))
    tmp.replace(path)


def read_frozen(path: Path, ids: Sequence[str] | None = None) -> list[Task]:
    """The tasks of a frozen file: all, in file order, or those named by ``ids``, in that order
    (an id the file lacks is a ``KeyError``). Only the lines asked for are parsed."""
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        lines = [ln for ln in fh.read().split("\n") if ln]
    if ids is None:
        return [Task.model_validate_json(ln) for ln in lines]
    start = len(LINE_PREFIX)
    by_id = {ln[start : ln.index('"', start)]: ln for ln in lines}
    missing = [i for i in ids if i not in by_id]
    if missing:
        raise KeyError(f"{path.name} has no task {missing[0]!r}")
    return [Task.model_validate_json(by_id[i]) for i in ids]


def frozen_stats_path(name: str, version: str | None = None) -> Path:
    """The statistics file beside suite ``name``'s data file at ``version`` (default: the pinned
    one): ``replan suites stats`` of the frozen content, computed when it was frozen."""
    return DATA_DIR / f"{name}-v{version or suite_version(name)}.stats.json"


def read_frozen_stats(name: str, options: Mapping[str, Any]) -> dict[str, Any] | None:
    """The statistics of suite ``name`` computed from its frozen file when it was frozen, when
    ``options`` give the pinned defaults and the file holds the pinned digest's figures;
    ``None`` otherwise (the caller computes them). Reading them costs no task parsing, which
    for a whole suite takes most of a second."""
    pin = _pinned(name, options)
    path = frozen_stats_path(name)
    if pin is None or not path.is_file():
        return None
    saved = json.loads(path.read_text(encoding="utf-8"))
    return saved["stats"] if saved.get("digest") == pin["digest"] else None


def _frozen_stats_text(digest: str, stats: Mapping[str, Any]) -> str:
    return json.dumps({"digest": digest, "stats": stats}, ensure_ascii=False, indent=1) + "\n"


def _sync_stats(
    name: str, version: str, digest: str, tasks: Sequence[Task], stats: StatsOf, check: bool
) -> None:
    """Write (with ``check``, only verify) the statistics file of a frozen version."""
    path = frozen_stats_path(name, version)
    text = _frozen_stats_text(digest, stats(tasks))
    if path.is_file() and path.read_text(encoding="utf-8") == text:
        return
    if check:
        raise SystemExit(
            f"{path}: missing or stale statistics; rebuild them with "
            f"`python -m replan.suites freeze {name}`"
        )
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_text(text, encoding="utf-8")
    tmp.replace(path)


def build(
    name: str,
    tasks: Sequence[Task],
    *,
    bump: str | None = None,
    check: bool = False,
    stats: StatsOf | None = None,
) -> str:
    """Freeze ``tasks``, a fresh generation of suite ``name``: write (with ``check``, only
    verify) its data file and, given the suite's ``stats`` function, its statistics file;
    returns a one-line account.

    Raises ``SystemExit`` with the fix when the content is not the pinned digest and no ``bump``
    reason was given, or when ``check`` finds a file missing or stale. With ``bump`` the next
    version is pinned with the new digest and the reason; the old version's files stay and its
    pin moves under ``earlier`` (loadable as ``version=<old>``, :func:`frozen_file`).
    """
    pins = suite_versions()
    pin = pins.get(name, {})
    digest = suite_digest(tasks)
    version = str(pin.get("version", "1"))
    path = frozen_path(name, version)
    if digest != pin.get("digest"):
        if check or not bump:
            raise SystemExit(
                f"suite {name!r} changed: regenerated digest {digest}, pinned {pin.get('digest')} "
                f"(version {version}); freeze the new version with `python -m replan.suites "
                f"freeze {name} --bump 'one-line reason'`"
            )
        old = version
        version = str(int(version.split("+")[0]) + 1)
        earlier = dict(pin.get("earlier", {}))
        if pin.get("digest") and path.is_file():
            earlier[old] = {k: pin[k] for k in ("digest", "instances", "reason") if k in pin}
        pins[name] = {
            **pin,
            "version": version,
            "digest": digest,
            "instances": len(tasks),
            "reason": bump,
            **({"earlier": earlier} if earlier else {}),
        }
        write_frozen(frozen_path(name, version), tasks)
        if stats is not None:
            _sync_stats(name, version, digest, tasks, stats, check=False)
        VERSIONS_FILE.write_text(dump_pins(pins), encoding="utf-8")
        return f"{name}: version {version}, digest {digest}, {len(tasks)} tasks -> {frozen_path(name, version)}"
    if path.is_file() and suite_digest(read_frozen(path)) == digest:
        if stats is not None:
            _sync_stats(name, version, digest, tasks, stats, check)
        return f"{name}: version {version} is up to date (digest {digest}, {len(tasks)} tasks)"
    if check:
        raise SystemExit(
            f"{path}: missing or not the pinned suite; rebuild it with "
            f"`python -m replan.suites freeze {name}`"
        )
    write_frozen(path, tasks)
    if stats is not None:
        _sync_stats(name, version, digest, tasks, stats, check=False)
    return f"{name}: version {version}, digest {digest}, {len(tasks)} tasks -> {path}"


def dump_pins(pins: Mapping[str, Mapping[str, Any]]) -> str:
    """``versions.json`` text as kept in the repository: one suite a line."""
    rows = [f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False)}" for k, v in pins.items()]
    return "{\n" + ",\n".join(rows) + "\n}\n"


__all__ = [
    "CUSTOM",
    "DATA_DIR",
    "LINE_PREFIX",
    "VERSIONS_FILE",
    "build",
    "custom_identity",
    "dump_pins",
    "earlier_pin",
    "frozen_file",
    "frozen_path",
    "frozen_stats_path",
    "identity_label",
    "read_frozen",
    "read_frozen_stats",
    "suite_digest",
    "suite_identity",
    "suite_version",
    "suite_versions",
    "write_frozen",
]
