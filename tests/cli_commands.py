"""Every leaf command of the irbgen CLI, by its path of names (shared by the CLI-wide tests)."""

from __future__ import annotations

import click

from irbgen.cli import main


def commands(group: click.Group = main, prefix: tuple[str, ...] = ()) -> dict[tuple[str, ...], click.Command]:
    """Each leaf command under GROUP, keyed by its names, e.g. ("eval", "qa")."""
    found = {}
    for name, command in sorted(group.commands.items()):
        if isinstance(command, click.Group):
            found.update(commands(command, (*prefix, name)))
        else:
            found[(*prefix, name)] = command
    return found
