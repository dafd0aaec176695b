"""``replan data pararecover --dest DIR``: fetch the ParaRecover files, resumably, and check them.

The three files come from the upstream repository ``gbw206/ParaRecover`` at a pinned commit, as
raw files: ``{base}/gbw206/ParaRecover/{commit}/data/LEVEL-…/….jsonl`` (``base`` defaults to
``https://raw.githubusercontent.com``; ``--base-url`` or ``REPLAN_PARARECOVER_BASE_URL`` point
elsewhere, e.g. a mirror). A partial download (``*.part``) resumes with an HTTP Range request.
Every line is parsed with the ParaRecover loader before a file is declared fetched, and a
``manifest.json`` beside the files records the repository, commit, URLs, sizes and SHA-256.
"""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import typer

from replan.cli.terminal import labelled, plain_console

REPO = "gbw206/ParaRecover"
COMMIT = "db0e010a30f118c88356062fabc0843a79279249"
DEFAULT_BASE_URL = "https://raw.githubusercontent.com"
BASE_URL_ENV = "REPLAN_PARARECOVER_BASE_URL"
FILES = (
    "data/LEVEL-1/LEVEL-1_real_rollout.jsonl",
    "data/LEVEL-1/LEVEL-1_augmented.jsonl",
    "data/LEVEL-2/LEVEL-2_real_rollout.jsonl",
)
CHUNK = 1 << 16

data_app = typer.Typer(help="Fetch benchmark data.", no_args_is_help=True)


class FetchError(RuntimeError):
    """A file could not be fetched or did not validate (names the file and the reason)."""


def file_url(base_url: str, commit: str, path: str) -> str:
    return f"{base_url.rstrip('/')}/{REPO}/{commit}/{path}"


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(CHUNK), b""):
            h.update(block)
    return h.hexdigest()


def download(url: str, dest: Path, *, timeout: float = 60.0, retries: int = 3) -> dict[str, Any]:
    """Fetch ``url`` into ``dest`` through ``dest.part``, resuming a partial file with a Range
    request (a server that ignores the range sends the whole file, which then replaces it)."""
    import urllib.error
    import urllib.request

    part = dest.with_name(dest.name + ".part")
    resumed_from = 0
    last_error: Exception | None = None
    for attempt in range(retries):
        have = part.stat().st_size if part.exists() else 0
        req = urllib.request.Request(url, headers={"User-Agent": "replan-data/1"})
        if have:
            req.add_header("Range", f"bytes={have}-")
        try:
            with urllib.request.urlopen(req, timeout=timeout) as resp:
                status = resp.status
                if have and status == 206:
                    mode, resumed_from = "ab", max(resumed_from, have)
                elif status == 200:
                    mode = "wb"
                else:
                    raise FetchError(f"{url}: unexpected HTTP status {status}")
                with part.open(mode) as fh:
                    while True:
                        block = resp.read(CHUNK)
                        if not block:
                            break
                        fh.write(block)
            part.replace(dest)
            return {"resumed_from": resumed_from}
        except urllib.error.HTTPError as exc:
            if exc.code == 416 and have:  # the range starts at the end: the file is complete
                part.replace(dest)
                return {"resumed_from": have}
            last_error = FetchError(f"{url}: HTTP {exc.code} {exc.reason}")
            if 400 <= exc.code < 500:
                break
        except (urllib.error.URLError, TimeoutError, ConnectionError, OSError) as exc:
            last_error = exc
        time.sleep(min(2**attempt, 5) * 0.1)
    raise FetchError(f"could not fetch {url}: {last_error}")


def validate_file(path: Path) -> dict[str, Any]:
    """Parse every line with the loader; raises :class:`FetchError` on the first bad line."""
    from replan.suites.pararecover import LoadError, iter_instances

    lines = errors = duplicates = 0
    first: str | None = None
    levels: dict[str, int] = {}
    for item in iter_instances(path):
        lines += 1
        if isinstance(item, LoadError) and item.duplicate_of is not None:
            duplicates += 1  # a line that parses but repeats an id: counted, not a bad file
        elif isinstance(item, LoadError):
            errors += 1
            first = first or str(item)
        else:
            levels[item.level] = levels.get(item.level, 0) + 1  # type: ignore[union-attr]
    if errors:
        raise FetchError(f"{path}: {errors} of {lines} lines do not parse; first: {first}")
    if lines == 0:
        raise FetchError(f"{path}: the file is empty")
    out: dict[str, Any] = {"lines": lines, "levels": levels}
    if duplicates:
        out["duplicate_ids"] = duplicates
    return out


def fetch_pararecover(
    dest: Path,
    *,
    base_url: str | None = None,
    commit: str = COMMIT,
    force: bool = False,
    log: Any = None,
) -> dict[str, Any]:
    """Fetch, validate and record the three files; returns the manifest."""
    base_url = base_url or os.environ.get(BASE_URL_ENV) or DEFAULT_BASE_URL
    dest.mkdir(parents=True, exist_ok=True)
    manifest_path = dest / "manifest.json"
    old: dict[str, Any] = {}
    if manifest_path.exists():
        try:
            old = {f["path"]: f for f in json.loads(manifest_path.read_text())["files"]}
        except (ValueError, KeyError, TypeError):
            old = {}
    entries = []
    for rel in FILES:
        target = dest / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        url = file_url(base_url, commit, rel)
        prev = old.get(rel)
        if (
            not force
            and target.exists()
            and prev
            and prev.get("commit") == commit
            and prev.get("sha256") == _sha256(target)
        ):
            if log:
                log(f"up to date: {rel}")
            entries.append(prev)
            continue
        if force:
            target.unlink(missing_ok=True)
            target.with_name(target.name + ".part").unlink(missing_ok=True)
        if log:
            log(f"fetching {url}")
        info = download(url, target)
        try:
            checked = validate_file(target)
        except FetchError:
            target.replace(target.with_name(target.name + ".invalid"))
            raise
        entries.append(
            {
                "path": rel,
                "url": url,
                "commit": commit,
                "size": target.stat().st_size,
                "sha256": _sha256(target),
                "lines": checked["lines"],
                "levels": checked["levels"],
                "resumed_from": info["resumed_from"],
            }
        )
    manifest = {
        "repository": REPO,
        "commit": commit,
        "base_url": base_url,
        "fetched_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": entries,
    }
    manifest_path.write_text(json.dumps(manifest, indent=2, ensure_ascii=False) + "\n")
    return manifest


@data_app.command("pararecover")
def data_pararecover(
    dest: Path = typer.Option(..., "--dest", help="directory for the files and manifest.json"),
    base_url: str = typer.Option(
        None, "--base-url", help=f"raw-file server (default: ${BASE_URL_ENV} or GitHub)"
    ),
    commit: str = typer.Option(COMMIT, help="upstream commit to fetch"),
    force: bool = typer.Option(False, "--force", help="fetch again even if up to date"),
    as_json: bool = typer.Option(False, "--json", help="print the manifest as one JSON object"),
) -> None:
    """Fetch the ParaRecover LEVEL-1 / LEVEL-2 files, validate every line, write a manifest."""
    err = plain_console(stderr=True)
    try:
        manifest = fetch_pararecover(
            dest, base_url=base_url, commit=commit, force=force, log=err.print
        )
    except FetchError as exc:
        err.print(labelled("error", exc))
        raise typer.Exit(1) from exc
    if as_json:
        typer.echo(json.dumps(manifest, ensure_ascii=False))
        return
    for f in manifest["files"]:
        err.print(f"{f['path']}: {f['lines']} lines, {f['size']} bytes, sha256 {f['sha256'][:12]}…")
    err.print(f"manifest: {dest / 'manifest.json'}")


def register(app: typer.Typer) -> None:
    app.add_typer(data_app, name="data")
