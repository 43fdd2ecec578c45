"""The files irbgen ships and reads at run time, declared as package data so a wheel carries them.

- `phantom/`: the five word lists of the synthetic worlds (given names, surnames, occupations, hobbies);
- `wikidata/`: property wording, unit names and denied properties of the Wikidata build;
- `prompts/`: one TOML file per LLM prompt.

Code reaches them through `importlib.resources` (`resource_dir("phantom")`), never through the source
tree, so an installed wheel finds them as a clone does.
"""

from __future__ import annotations

from importlib.resources import files
from importlib.resources.abc import Traversable


def resource_dir(name: str) -> Traversable:
    """The folder `name` of irbgen's bundled resources ("phantom", "wikidata", "prompts")."""
    return files(__name__) / name
