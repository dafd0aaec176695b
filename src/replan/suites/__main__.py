"""Build tool for frozen suites: ``python -m replan.suites freeze SUITE [--bump REASON | --check]``.

SUITE is ``toolmaze`` (goal-level queries), ``toolmaze-guided`` (step-list queries) or
``pararecover-synth``. It regenerates the suite from the corpus (a
minute or so) and writes its versioned data file
(see :mod:`replan.suites.versions`) and its statistics; ``--check`` only verifies the file, ``--bump`` freezes
changed content as the next version with a one-line reason.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from functools import partial

from replan.core.task import Task
from replan.suites.pararecover_synth import generate_synth, synth_stats
from replan.suites.toolmaze import generate, stats
from replan.suites.toolmaze.levels import GOAL_PER_LEVEL
from replan.suites.versions import StatsOf, build

#: the generated suites that are frozen, and what generates each in full (default options)
GENERATORS: dict[str, Callable[[], list[Task]]] = {
    "toolmaze": partial(generate, queries="goal", per_level=GOAL_PER_LEVEL),
    "toolmaze-guided": partial(generate, queries="guided"),
    "pararecover-synth": generate_synth,
}
#: what each frozen suite's ``replan suites stats`` figures are computed by (stored beside the
#: data file, so that the command reads them instead of parsing every instance)
STATS: dict[str, StatsOf] = {
    "toolmaze": stats,
    "toolmaze-guided": stats,
    "pararecover-synth": synth_stats,
}


def main(argv: Sequence[str] | None = None) -> None:
    """Parse the command line and freeze (or check) one suite."""
    ap = argparse.ArgumentParser(
        prog="python -m replan.suites",
        description="Regenerate a generated suite and write its frozen, versioned data file.",
    )
    sub = ap.add_subparsers(dest="command", required=True)
    fr = sub.add_parser("freeze", help="regenerate SUITE and write (or check) its data file")
    fr.add_argument("suite", choices=sorted(GENERATORS))
    fr.add_argument("--bump", metavar="REASON", help="the content changed: next version, and why")
    fr.add_argument("--check", action="store_true", help="only verify the file; write nothing")
    ns = ap.parse_args(argv)
    tasks = GENERATORS[ns.suite]()
    print(build(ns.suite, tasks, bump=ns.bump, check=ns.check, stats=STATS[ns.suite]))


if __name__ == "__main__":
    main()
