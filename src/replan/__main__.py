"""``python -m replan``: the same command line as the ``replan`` script (for an environment
whose scripts folder is not on ``PATH``)."""

from replan.cli import main

if __name__ == "__main__":
    main()
