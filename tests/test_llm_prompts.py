"""Prompt files: loading, rendering, output models and errors that name the file."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import BaseModel

from irbgen.errors import BadInputError
from irbgen.llm.prompts import Prompt, default_prompt_dir, list_prompts, load_prompt
from irbgen.schema import PromptRef

PROMPTS = Path(__file__).resolve().parent / "data" / "prompts"


class Keypoints(BaseModel):
    keypoints: list[str]


def write(directory: Path, name: str, text: str) -> Path:
    path = directory / f"{name}.toml"
    path.write_text(text, encoding="utf-8")
    return path


GOOD = """
name = "{name}"
version = "1"
description = "d"
system = "s"
user = "u {{x}}"
"""


def test_default_directory_is_the_bundled_prompts_folder():
    assert default_prompt_dir() == Path(__file__).resolve().parents[1] / "irbgen" / "resources" / "prompts"


def test_list_prompts():
    assert list_prompts(PROMPTS) == ["echo", "keypoints"]
    assert list_prompts(PROMPTS / "nowhere") == []


def test_free_text_prompt_renders_system_and_user():
    prompt = load_prompt("echo", PROMPTS)
    assert isinstance(prompt, Prompt)
    assert prompt.output is None and prompt.output_model is None
    assert prompt.placeholders == ("sentence",)
    assert prompt.ref == PromptRef(name="echo", version="1")
    system = 'Repeat the user\'s sentence exactly. JSON like {"a": 1} stays literal here.'
    assert prompt.render(sentence="Paris is in France.") == [
        {"role": "system", "content": system},
        {"role": "user", "content": "Sentence: Paris is in France."},
    ]


def test_structured_prompt_resolves_its_output_model():
    prompt = load_prompt("keypoints", PROMPTS, models={"Keypoints": Keypoints})
    assert prompt.output == "Keypoints"
    assert prompt.output_model is Keypoints
    assert prompt.ref.version == "2"
    assert prompt.placeholders == ("title", "sentence", "limit")
    messages = prompt.render(title="Paris", sentence="It is big.", limit=3, unused="extra values are fine")
    assert messages[0] == {
        "role": "system",
        "content": "You split a citing sentence into short, self-contained keypoints.\n",
    }
    assert messages[1]["content"] == (
        "Title: Paris\nSentence: It is big.\n"
        'Return {"keypoints": [...]} with at most 3 items; Paris is the article.\n'
    )
    # Without a registry the name is kept and can be resolved later.
    unresolved = load_prompt("keypoints", PROMPTS)
    assert unresolved.output_model is None
    assert unresolved.resolve_output({"Keypoints": Keypoints}) is Keypoints


def test_unregistered_output_model_lists_the_registered_ones():
    with pytest.raises(BadInputError) as info:
        load_prompt("keypoints", PROMPTS, models={"Zeta": Keypoints, "Alpha": Keypoints})
    message = str(info.value)
    assert "keypoints.toml" in message and "'Keypoints' is not registered" in message
    assert "Alpha, Zeta" in message


def test_missing_placeholder_names_the_prompt_and_the_placeholder():
    prompt = load_prompt("keypoints", PROMPTS)
    with pytest.raises(BadInputError) as info:
        prompt.render(title="Paris")
    message = str(info.value)
    assert "keypoints.toml" in message and "'keypoints'" in message
    assert "{sentence}" in message and "{limit}" in message


def test_values_are_not_reinterpreted_as_templates():
    prompt = load_prompt("echo", PROMPTS)
    assert prompt.render(sentence="{title} {0} {{x}}")[1]["content"] == "Sentence: {title} {0} {{x}}"


def test_missing_file_names_the_path_and_the_available_prompts(tmp_path):
    write(tmp_path, "alpha", GOOD.format(name="alpha"))
    with pytest.raises(BadInputError) as info:
        load_prompt("nope", tmp_path)
    assert str(tmp_path / "nope.toml") in str(info.value)
    assert "alpha" in str(info.value)


@pytest.mark.parametrize("name", ["../secret", "a/b", "", ".hidden"])
def test_bad_prompt_names_are_refused(tmp_path, name):
    with pytest.raises(BadInputError, match="bad prompt name"):
        load_prompt(name, tmp_path)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('name = "bad"\nversion = \n', "invalid TOML"),
        ('name = "bad"\nversion = "1"\ndescription = "d"\nsystem = "s"\n', "missing key(s) user"),
        (GOOD.format(name="bad") + 'temperature = "0"\n', "unknown key(s) temperature"),
        (GOOD.format(name="other"), "does not match the file name 'bad'"),
        (GOOD.format(name="bad").replace('version = "1"', "version = 1"), 'quote it: version = "1"'),
        (GOOD.format(name="bad").replace("{x}", "{x.__class__}"), "must be a plain name"),
        (GOOD.format(name="bad").replace("{x}", "{0}"), "must be a plain name"),
        (GOOD.format(name="bad").replace("{x}", "{x"), "not a valid template"),
        (GOOD.format(name="bad") + 'output = "not a name"\n', "'output' must name a model"),
    ],
)
def test_bad_prompt_files_name_the_file(tmp_path, text, expected):
    path = write(tmp_path, "bad", text)
    with pytest.raises(BadInputError) as info:
        load_prompt("bad", tmp_path)
    assert str(path) in str(info.value)
    assert expected in str(info.value)


def test_toml_errors_carry_the_line(tmp_path):
    write(tmp_path, "bad", 'name = "bad"\nversion = "1"\ndescription = \n')
    with pytest.raises(BadInputError, match="line 3"):
        load_prompt("bad", tmp_path)


def test_empty_system_text_sends_only_the_user_message(tmp_path):
    write(tmp_path, "plain", GOOD.format(name="plain").replace('system = "s"', 'system = ""'))
    assert load_prompt("plain", tmp_path).render(x=1) == [{"role": "user", "content": "u 1"}]
