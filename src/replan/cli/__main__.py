"""``python -m replan.cli`` runs the ``replan`` command."""

from replan.cli import main

main()
