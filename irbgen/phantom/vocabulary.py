"""The word lists a synthetic world draws from: given names, surnames, occupations and hobbies."""

from __future__ import annotations

from dataclasses import dataclass
from importlib.resources.abc import Traversable
from pathlib import Path

from irbgen.errors import BadInputError
from irbgen.resources import resource_dir

DEFAULT_VOCABULARY_DIR = resource_dir("phantom")  # irbgen/resources/phantom, as installed

FILES = {
    "female_names": "first_names_female.txt",
    "male_names": "first_names_male.txt",
    "surnames": "surnames.txt",
    "occupations": "occupations.txt",
    "hobbies": "hobbies.txt",
}


@dataclass(frozen=True)
class Vocabulary:
    """Sorted, de-duplicated word lists; indices into them are what the world stores."""

    female_names: tuple[str, ...]
    male_names: tuple[str, ...]
    surnames: tuple[str, ...]
    occupations: tuple[str, ...]
    hobbies: tuple[str, ...]


def _read_list(path: Path | Traversable) -> tuple[str, ...]:
    if not path.is_file():
        raise BadInputError(f"{path}: vocabulary file not found")
    words = []
    seen = set()
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as error:
        raise BadInputError(f"{path}: not UTF-8 text ({error.reason} at byte {error.start})") from None
    except OSError as error:
        raise BadInputError(f"{path}: cannot read the vocabulary file ({error.strerror})") from None
    for line_number, line in enumerate(text.splitlines(), start=1):
        word = line.strip()
        if not word:
            continue
        if "," in word or '"' in word or "\\" in word:
            raise BadInputError(f"{path}:{line_number}: entries may not contain a comma, quote or backslash")
        if word not in seen:
            seen.add(word)
            words.append(word)
    if not words:
        raise BadInputError(f"{path}: vocabulary file is empty")
    return tuple(sorted(words))


def load_vocabulary(directory: Path | None = None) -> Vocabulary:
    """Read the five word lists from `directory` (default: the bundled irbgen/resources/phantom)."""
    directory = Path(directory) if directory is not None else DEFAULT_VOCABULARY_DIR
    return Vocabulary(**{field: _read_list(directory / name) for field, name in FILES.items()})
