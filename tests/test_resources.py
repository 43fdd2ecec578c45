"""Every file irbgen reads at run time lives in the package and is declared as package data.

The loaders read irbgen/resources/ through importlib.resources; a file there that pyproject.toml does not
declare would be left out of a wheel, and an installed irbgen would fail where a clone works.
.ci/wheel-install checks a real wheel outside the source tree; this checks the declaration in the suite.
"""

from __future__ import annotations

import glob
import tomllib
from importlib.resources import files
from pathlib import Path

import pytest

import irbgen
from irbgen.eval.qa.judge import JUDGE_PROMPT
from irbgen.eval.qa.methods import METHODS
from irbgen.irb.graph import GRAPH_PROMPT
from irbgen.irb.grounding import GROUNDING_PROMPT
from irbgen.irb.keypoints import KEYPOINT_PROMPT
from irbgen.irb.questions import CHECK_PROMPT, REFINE_PROMPT, STEP_PROMPT
from irbgen.llm.prompts import PROMPT_SUFFIX, default_prompt_dir, list_prompts, load_prompt
from irbgen.phantom.vocabulary import DEFAULT_VOCABULARY_DIR, FILES, load_vocabulary
from irbgen.wikidata.property_table import shipped_table
from irbgen.wikidata.questions import ANSWER_PROMPT, QUESTION_PROMPT
from irbgen.wikidata.vocabulary import (
    CHANGING_FILE,
    DEFAULT_DATA_DIR,
    DENIED_FILE,
    PROPERTIES_FILE,
    PROPERTY_TABLE_FILE,
    TRIVIAL_FILE,
    UNITS_FILE,
    load_denied,
    load_units,
    load_wordings,
)

REPO = Path(__file__).resolve().parents[1]
RESOURCES = REPO / "irbgen" / "resources"

PROMPTS = {
    KEYPOINT_PROMPT,
    GROUNDING_PROMPT,
    GRAPH_PROMPT,
    STEP_PROMPT,
    CHECK_PROMPT,
    REFINE_PROMPT,
    QUESTION_PROMPT,
    ANSWER_PROMPT,
    JUDGE_PROMPT,
    *(method.prompt for method in METHODS.values()),
}

# resource folder -> the file names the code reads from it
EXPECTED = {
    "phantom": set(FILES.values()),
    "wikidata": {PROPERTIES_FILE, PROPERTY_TABLE_FILE, UNITS_FILE, DENIED_FILE, CHANGING_FILE, TRIVIAL_FILE},
    "prompts": {name + PROMPT_SUFFIX for name in PROMPTS},
}


def test_the_loaders_default_to_the_package_not_the_source_tree():
    bundled = files("irbgen.resources")
    assert DEFAULT_VOCABULARY_DIR == bundled / "phantom"
    assert DEFAULT_DATA_DIR == bundled / "wikidata"
    assert default_prompt_dir() == bundled / "prompts"
    assert Path(str(bundled)).parent == Path(irbgen.__file__).parent


@pytest.mark.parametrize("folder", sorted(EXPECTED))
def test_each_resource_folder_holds_exactly_the_files_the_code_reads(folder):
    shipped = {entry.name for entry in (files("irbgen.resources") / folder).iterdir() if entry.is_file()}
    assert shipped == EXPECTED[folder]


def test_the_bundled_resources_load():
    vocabulary = load_vocabulary()
    assert vocabulary.surnames and vocabulary.female_names and vocabulary.hobbies
    assert load_wordings() and load_units() and load_denied()
    assert len(shipped_table()) == 4068
    assert list_prompts() == sorted(PROMPTS)
    for name in PROMPTS:
        assert load_prompt(name).name == name


def test_pyproject_declares_every_resource_file_as_package_data():
    with open(REPO / "pyproject.toml", "rb") as file:
        patterns = tomllib.load(file)["tool"]["setuptools"]["package-data"]["irbgen.resources"]
    # setuptools expands each pattern with glob.glob, relative to the package's folder
    declared = {
        Path(match).relative_to(RESOURCES).as_posix()
        for pattern in patterns
        for match in glob.glob(str(RESOURCES / pattern), recursive=True)
        if Path(match).is_file()
    }
    needed = {f"{folder}/{name}" for folder, names in EXPECTED.items() for name in names}
    assert needed <= declared, f"not declared as package data: {sorted(needed - declared)}"
    data_files = {
        path.relative_to(RESOURCES).as_posix()
        for path in RESOURCES.rglob("*")
        if path.is_file() and path.suffix not in {".py", ".pyc"}
    }
    assert data_files <= declared, f"not declared as package data: {sorted(data_files - declared)}"
