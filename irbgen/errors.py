"""Errors irbgen raises on purpose; the CLI maps them to exit codes (2 bad input, 1 runtime)."""

import re

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.-]*://)[^/\s@]+@")


def redact(text: str) -> str:
    """TEXT with the user and password of every URL in it replaced: a key given as https://u:KEY@host."""
    return _USERINFO.sub(r"\1[redacted]@", text)


class IrbgenError(Exception):
    """A failure irbgen reports in one line; exit code 1.

    `fatal` marks errors that stop a build instead of rejecting the one record that raised them.
    """

    exit_code = 1
    fatal = False


class BadInputError(IrbgenError):
    """Bad usage, settings or input data; exit code 2. The message names the file, line or flag."""

    exit_code = 2
    fatal = True  # bad settings or a broken input file: stopping beats rejecting every record


class OutputExistsError(BadInputError):
    """The output directory exists and overwriting was not asked for."""


class MissingExtraError(IrbgenError, ImportError):
    """An optional dependency is not installed; the message names the extra to install."""

    fatal = True
