"""The command line: click commands only. Each parses its flags, loads settings, calls a build or an
evaluation, and prints one summary line; the work itself lives in the packages below."""

from irbgen.cli.main import main

__all__ = ["main"]
