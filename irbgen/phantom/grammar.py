"""The question grammar and the templates it yields up to a recursion depth.

    S   -> "Who is" R "?" | "What is" A "?" | "How many" RN_p "does" R_c "have?"
    R   -> "the" RN "of" R_c | "the person whose" AN "is" AV
    R_c -> R | N
    A   -> "the" AN "of" R

Depth counts nonterminal expansions along a derivation, as PhantomWiki counts it: depth 6 gives 8 templates,
10 gives 20 and 20 gives 50.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

GRAMMAR: dict[str, tuple[tuple[str, ...], ...]] = {
    "S": (("Who is", "R", "?"), ("What is", "A", "?"), ("How many", "RN_p", "does", "R_c", "have", "?")),
    "R": (("the", "RN", "of", "R_c"), ("the person whose", "AN", "is", "AV")),
    "R_c": (("R",), ("N",)),
    "A": (("the", "AN", "of", "R"),),
    "RN": (("<relation>",),),
    "RN_p": (("<relation_plural>",),),
    "AN": (("<attribute_name>",),),
    "AV": (("<attribute_value>",),),
    "N": (("<name>",),),
}

FORMS = {"Who is": "who", "What is": "what", "How many": "how_many"}


@dataclass(frozen=True)
class Template:
    """A question shape: its form, how many relations it chains, and what it starts from.

    `relations` counts the "the <relation> of" steps; `start` is "name" or "attribute".
    """

    id: int
    form: str  # "who", "what" or "how_many"
    relations: int
    start: str
    tokens: tuple[str, ...]

    @property
    def text(self) -> str:
        return " ".join(self.tokens[:-1]) + self.tokens[-1]


def _expand(symbol: str, depth: int) -> list[tuple[str, ...]]:
    if depth <= 0:
        return []
    if symbol not in GRAMMAR:
        return [(symbol,)]
    derivations: list[tuple[str, ...]] = []
    for rhs in GRAMMAR[symbol]:
        parts = [_expand(item, depth - 1) for item in rhs]
        derivations.extend(sum(choice, ()) for choice in product(*parts))
    return derivations


def _describe(template_id: int, tokens: tuple[str, ...]) -> Template:
    return Template(
        id=template_id,
        form=FORMS[tokens[0]],
        relations=tokens.count("<relation>"),
        start="name" if "<name>" in tokens else "attribute",
        tokens=tokens,
    )


def templates(depth: int) -> list[Template]:
    """Every template the grammar yields within `depth`, in derivation order."""
    return [_describe(index, tokens) for index, tokens in enumerate(_expand("S", depth))]
