"""``replan run --langsmith``: one LangSmith experiment per design × model, feedback attached.

The dataset is the run's tasks (one example per task and seed, inputs ``{"task_id", "seed",
"query", "task"}``), uploaded once under a name derived from its content and reused by later
runs. The target returns the stored Episode for the example, so nothing re-runs: LangSmith gets
the same episodes and the same scores as the local store.
"""

from __future__ import annotations

import hashlib
import os
from collections import defaultdict
from pathlib import Path
from typing import Any

from replan.runner.store import ResultsStore


def dataset_name(task_ids: list[str], seeds: list[int]) -> str:
    digest = hashlib.sha256(("|".join(sorted(task_ids)) + f"#{sorted(seeds)}").encode()).hexdigest()
    return f"replan-{digest[:10]}"


def log_to_langsmith(
    out_dir: str | Path, *, client: Any = None, upload_results: bool = True
) -> str:
    """Log the store's episodes to LangSmith; returns a one-line account of what happened.

    Without a client and without ``LANGSMITH_API_KEY`` it explains what is missing and changes
    nothing (the run itself is already stored locally).
    """
    if client is None and not os.environ.get("LANGSMITH_API_KEY"):
        return (
            "--langsmith: LANGSMITH_API_KEY is not set, so nothing was sent; the results are "
            f"in {out_dir} (set LANGSMITH_API_KEY, and LANGSMITH_ENDPOINT for a self-hosted "
            "instance, then rerun the same command: finished episodes are not re-run)"
        )
    from langsmith import Client, evaluate
    from langsmith.schemas import Example

    from replan.evaluators.langsmith import (
        prefix_evaluator,
        prefix_summary,
        sde_evaluator,
        sde_summary,
        toolmaze_evaluator,
        toolmaze_summary,
    )

    client = client or Client()
    with ResultsStore(out_dir) as store:
        episodes = store.episodes()
        tasks = store.tasks()
    by_run: dict[tuple[str, str], dict[tuple[str, int], Any]] = defaultdict(dict)
    for e in episodes:
        by_run[(e.design, e.model)][(e.task_id, e.seed)] = e
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
    if upload_results:
        name = dataset_name([k[0] for k in keys], [k[1] for k in keys])
        if client.has_dataset(dataset_name=name):
            data: Any = name
        else:
            ds = client.create_dataset(
                name, description="replan tasks (one example per task and seed)"
            )
            client.create_examples(
                dataset_id=ds.id,
                inputs=examples_in,
                outputs=[{"task": x["task"]} for x in examples_in],
            )
            data = name
    else:
        import uuid

        data = [
            Example(id=uuid.uuid4(), inputs=x, outputs={"task": x["task"]}, dataset_id=uuid.uuid4())
            for x in examples_in
        ]
    results = []
    for (design, model), eps in sorted(by_run.items()):

        def target(
            inputs: dict[str, Any], _eps: dict[tuple[str, int], Any] = eps
        ) -> dict[str, Any]:
            ep = _eps.get((inputs["task_id"], int(inputs["seed"])))
            return {
                "episode": ep.model_dump(mode="json") if ep else None,
                "answer": ep.final_answer if ep else None,
            }

        res = evaluate(
            target,
            data=data,
            evaluators=[prefix_evaluator, toolmaze_evaluator, sde_evaluator],
            summary_evaluators=[prefix_summary, toolmaze_summary, sde_summary],
            experiment_prefix=f"{design}-{model}".replace(":", "-"),
            metadata={"design": design, "model": model, "replan_out": str(out_dir)},
            client=client,
            upload_results=upload_results,
            max_concurrency=0,
        )
        results.append(res)
    return f"--langsmith: logged {len(results)} experiment(s) over {len(keys)} examples"
