"""``replan run --langsmith``: one LangSmith experiment per design × model, feedback attached.

The dataset is the run's tasks (one example per task and seed, inputs ``{"task_id", "seed",
"query", "task"}``), uploaded once under a name derived from its content and reused by later
runs. The target returns the stored Episode for the example, so nothing re-runs: LangSmith gets
the same episodes and the same scores as the local store.

The upload comes after the local results, summary and report, and never undoes them: the store
records which episodes reached which endpoint (``uploads``), an unreachable or failing endpoint
is reported in one line (an endpoint that does not answer is found by :func:`probe` in
seconds, before anything is sent), and the next ``replan run --langsmith`` on the directory
sends only the design × model experiments with episodes still missing there.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections import defaultdict
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from replan.core import linre
from replan.core.redact import redact
from replan.evaluators import scoring_stamp
from replan.runner.store import ResultsStore, StoreError, WriterLock

#: what one upload is given: the run's name, its episodes by (task id, seed), the dataset
#: (name or examples), the client; it returns when LangSmith has the experiment
Uploader = Callable[[str, str, dict[tuple[str, int], Any], Any, Any, Path], None]


def dataset_name(task_ids: list[str], seeds: list[int]) -> str:
    digest = hashlib.sha256(("|".join(sorted(task_ids)) + f"#{sorted(seeds)}").encode()).hexdigest()
    return f"replan-{digest[:10]}"


def endpoint_of(client: Any) -> str:
    """The endpoint uploads are tracked by (credentials removed)."""
    url = getattr(client, "api_url", None) or os.environ.get("LANGSMITH_ENDPOINT") or "langsmith"
    return redact(str(url)).rstrip("/")


@contextmanager
def _quiet(name: str = "langsmith") -> Iterator[None]:
    """Keep the client's own retry warnings and tracebacks off the terminal (we say one line)."""
    logger = logging.getLogger(name)
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)


def probe(client: Any, timeout_s: float = 3.0) -> str | None:
    """Why LangSmith at the client's endpoint cannot be reached, or None when it answers.

    One HTTP request (``GET /info``; any HTTP status counts as an answer) with a short timeout
    and no retries, through the same proxies the client would use, so an endpoint that is down
    costs at most ``timeout_s`` seconds instead of the client's own retry schedule."""
    import requests

    url = getattr(client, "api_url", None) or os.environ.get("LANGSMITH_ENDPOINT")
    url = str(url or "https://api.smith.langchain.com").rstrip("/")
    try:
        requests.get(f"{url}/info", timeout=timeout_s, allow_redirects=False)
    except requests.Timeout:
        return f"no answer within {timeout_s:g} s"
    except requests.RequestException as exc:
        found = linre.search(r"\[Errno -?\d+\] ([^'\")\]]+)", str(exc))
        return found.group(1).strip().lower() if found else short_error(exc)
    return None


def short_error(exc: BaseException) -> str:
    """``ClassName: first line`` of an exception, redacted, at most ~200 characters."""
    text = str(exc).strip().splitlines()
    first = text[0].split(". ")[0] if text else ""  # the sentence, not the nested reprs
    msg = f"{type(exc).__name__}: {first}" if first else type(exc).__name__
    return redact(msg)[:200]


def evaluate_upload(
    design: str,
    model: str,
    eps: dict[tuple[str, int], Any],
    data: Any,
    client: Any,
    out_dir: Path,
    *,
    upload_results: bool = True,
    records: Mapping[str, Any] | None = None,
) -> None:
    """One LangSmith experiment for one design × model: the stored episodes with the records
    they were scored to at storage (``records`` by episode id), so nothing is scored again."""
    from langsmith import evaluate

    from replan.evaluators.langsmith import evaluators, summary_evaluators

    stored = records or {}

    def target(inputs: dict[str, Any]) -> dict[str, Any]:
        ep = eps.get((inputs["task_id"], int(inputs["seed"])))
        out: dict[str, Any] = {
            "episode": ep.model_dump(mode="json") if ep else None,
            "answer": ep.final_answer if ep else None,
        }
        if ep is not None and ep.episode_id in stored:
            out["records"] = stored[ep.episode_id]
        return out

    evaluate(
        target,
        data=data,
        evaluators=evaluators(),
        summary_evaluators=summary_evaluators(),
        experiment_prefix=f"{design}-{model}".replace(":", "-"),
        metadata={"design": design, "model": model, "replan_out": str(out_dir)},
        client=client,
        upload_results=upload_results,
        max_concurrency=0,
    )


def log_to_langsmith(
    out_dir: str | Path,
    *,
    client: Any = None,
    upload_results: bool = True,
    upload: Uploader | None = None,
) -> str:
    """Log the store's episodes to LangSmith; returns a one-line account of what happened.

    Without a client and without ``LANGSMITH_API_KEY`` it explains what is missing and changes
    nothing (the run itself is already stored locally). Only design × model experiments with
    episodes not yet sent to this endpoint are uploaded; each one that LangSmith accepted is
    recorded in the store, so a failure (endpoint down, a timeout) costs a rerun of the rest.
    Never raises for a LangSmith problem: the line says what failed and how to retry.
    """
    out_dir = Path(out_dir)
    retry = (
        f"the results, summary and report are in {out_dir}; rerun `replan run --langsmith` "
        "with the same options to upload what is missing"
    )
    if client is None and not os.environ.get("LANGSMITH_API_KEY"):
        return (
            "--langsmith: LANGSMITH_API_KEY is not set, so nothing was sent; the results are "
            f"in {out_dir} (set LANGSMITH_API_KEY, and LANGSMITH_ENDPOINT for a self-hosted "
            "instance, then rerun the same command: finished episodes are not re-run)"
        )
    try:
        with ResultsStore(out_dir) as store:
            scored = store.scored_episodes(scoring_stamp())
            tasks = store.tasks()
            if client is None:
                from langsmith import Client

                # no background batching thread: every upload happens (or fails) inside this
                # call, so nothing logs or retries behind the one line this returns
                client = Client(auto_batch_tracing=False)
            target = endpoint_of(client)
            sent = store.uploaded_keys(target)
    except StoreError as exc:
        return f"--langsmith: nothing was sent: {exc}"
    except Exception as exc:  # a LangSmith client problem is one line
        return f"--langsmith: nothing was sent ({short_error(exc)}); {retry}"
    episodes = [ep for ep, _, _ in scored]
    # what each episode was scored to at storage, where the scoring code is current
    records = {ep.episode_id: recs for ep, _, recs in scored if recs is not None}
    by_run: dict[tuple[str, str], dict[tuple[str, int], Any]] = defaultdict(dict)
    for e in episodes:
        by_run[(e.design, e.model)][(e.task_id, e.seed)] = e
    pending = {
        run: eps
        for run, eps in by_run.items()
        if any(e.episode_id not in sent for e in eps.values())
    }
    if not pending:
        return (
            f"--langsmith: all {len(by_run)} experiment(s) in {out_dir} are already in "
            f"LangSmith at {target}; nothing to send"
        )
    keys = sorted({(e.task_id, e.seed) for e in episodes})
    examples_in = [
        {
            "task_id": t,
            "seed": s,
            "query": tasks[t].query if t in tasks else "",
            "task": tasks[t].model_dump(mode="json") if t in tasks else None,
        }
        for t, s in keys
    ]
    done: list[tuple[str, str]] = []
    why = probe(client) if upload_results and upload is None else None
    if why is not None:  # down or out of reach: say so now, not after the client's retries
        return (
            f"--langsmith: upload to {target} failed (LangSmith is unreachable: {why}); 0 of "
            f"{len(pending)} experiment(s) sent, {len(pending)} left; {retry}"
        )
    try:
        with _quiet():
            data = _dataset(client, keys, examples_in, upload_results)
            for (design, model), eps in sorted(pending.items()):
                if upload is not None:
                    upload(design, model, eps, data, client, out_dir)
                else:
                    evaluate_upload(
                        design,
                        model,
                        eps,
                        data,
                        client,
                        out_dir,
                        upload_results=upload_results,
                        records=records,
                    )
                if upload_results:
                    with WriterLock(out_dir), ResultsStore(out_dir) as store:
                        store.mark_uploaded([e.episode_id for e in eps.values()], target)
                done.append((design, model))
    except Exception as exc:  # whatever LangSmith does, the run is kept
        left = len(pending) - len(done)
        return (
            f"--langsmith: upload to {target} failed ({short_error(exc)}); {len(done)} of "
            f"{len(pending)} experiment(s) sent, {left} left; {retry}"
        )
    return (
        f"--langsmith: logged {len(done)} experiment(s) over {len(keys)} examples to {target}"
        + (f" ({len(by_run) - len(done)} already there)" if len(by_run) > len(done) else "")
    )


def _dataset(
    client: Any, keys: list[tuple[str, int]], examples_in: list[dict[str, Any]], upload: bool
) -> Any:
    """The dataset name in LangSmith (created once), or local examples when not uploading."""
    from langsmith.schemas import Example

    if upload:
        name = dataset_name([k[0] for k in keys], [k[1] for k in keys])
        if not client.has_dataset(dataset_name=name):
            ds = client.create_dataset(
                name, description="replan tasks (one example per task and seed)"
            )
            client.create_examples(
                dataset_id=ds.id,
                inputs=examples_in,
                outputs=[{"task": x["task"]} for x in examples_in],
            )
        return name
    import uuid

    return [
        Example(id=uuid.uuid4(), inputs=x, outputs={"task": x["task"]}, dataset_id=uuid.uuid4())
        for x in examples_in
    ]
