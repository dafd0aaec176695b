"""The consoles of the ``replan`` commands: nothing they print is read as rich markup or emoji.

What a command prints carries text from outside (paths, episode and task ids, dataset lines,
model and server errors): ``[/]`` in it would be read as rich markup and end the command with
rich's ``MarkupError``, ``:x:`` would print an emoji. Every console of the CLI comes from
:func:`plain_console`, which reads neither; a coloured label (``error:``, ``skipped``) is styled by
:func:`labelled`, never by markup in the text.
"""

from __future__ import annotations

from typing import Any

from rich.console import Console
from rich.text import Text


def plain_console(*, stderr: bool = False, **kwargs: Any) -> Console:
    """A console that prints text as it is (no markup, no emoji codes)."""
    return Console(stderr=stderr, markup=False, emoji=False, **kwargs)


def labelled(label: str, text: object, style: str = "red", sep: str = ": ") -> Text:
    """``label`` in ``style``, then ``text`` as it is: ``error: no such file [/]``."""
    return Text.assemble((label, style), sep, str(text))


__all__ = ["labelled", "plain_console"]
