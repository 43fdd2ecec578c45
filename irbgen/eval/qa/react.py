"""A ReAct agent: the model alternates Thought and Action lines, and tools answer with Observations.

Tools, as PhantomWiki's agent has them: Search[text] (articles containing the text, topped up with the
best-ranked ones), RetrieveArticle[title] (exact title match) and Finish[answer]. Every step is logged
with its thought, action and observation, and every document the agent was shown is recorded in the
order it first appeared, so the agent's retrieval can be scored against the qrels like a ranked run.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from irbgen.llm.types import Completion

if TYPE_CHECKING:
    from irbgen.eval.corpus_index import SearchIndex
    from irbgen.llm.client import LLMClient
    from irbgen.llm.prompts import Prompt

DEFAULT_MAX_STEPS = 20
SEARCH_RESULTS = 5
SCAN_LIMIT = 100  # exact-text matches counted before the agent is told "more than"
SNIPPET_CHARS = 160
MAX_ARTICLE_TOKENS = 3_000  # untrusted corpora hold huge pages; an observation shows at most this much
STEP_LIMIT = "step limit"

# "Action: Tool[argument]" (also "Action 3:", markdown emphasis, or the bare "Tool[argument]").
# The argument runs to the last "]" on the line, so brackets inside it survive.
_ACTION = re.compile(r"^[\s*_>-]*(?:action(?:\s*\d+)?[\s*_]*:[\s*_]*)?([A-Za-z_ ]+?)\s*\[(.*)\]", re.I | re.M)
_THOUGHT = re.compile(r"thought(?:\s*\d+)?[\s*_]*:[\s*_]*(.*?)(?=^[\s*_>-]*action|\Z)", re.I | re.M | re.S)
_TOOLS = {"search": "Search", "retrievearticle": "RetrieveArticle", "finish": "Finish"}
_SPACES = re.compile(r"\s+")

FORMAT_HELP = (
    "Invalid format. Reply with two lines: 'Thought: <your reasoning>' and then 'Action: <tool call>', "
    "where the tool call is one of Search[text], RetrieveArticle[title] or Finish[answer]."
)


@dataclass(frozen=True)
class Action:
    """A parsed reply: the thought, the tool and its argument, and the action line as written."""

    thought: str
    tool: str
    argument: str
    text: str


@dataclass
class AgentResult:
    """How a ReAct run ended: an answer, a model failure, or the step limit; plus what it did."""

    answer: str | None
    trajectory: list[dict[str, Any]] = field(default_factory=list)
    retrieved: list[str] = field(default_factory=list)
    completion: Completion | None = None
    error: str | None = None  # the model call failed
    unanswered: str | None = None  # e.g. "step limit"

    @property
    def calls(self) -> int:
        """Model calls made (one per step)."""
        return len(self.trajectory)


def parse_action(text: str) -> Action | None:
    """The first valid tool call in a reply, with the thought before it; None if there is none."""
    for match in _ACTION.finditer(text):
        tool = _TOOLS.get(re.sub(r"[\s_]", "", match.group(1)).lower())
        if tool is None:
            continue
        thought_match = _THOUGHT.search(text[: match.start()])
        thought = thought_match.group(1).strip() if thought_match else text[: match.start()].strip()
        argument = match.group(2).strip()
        if len(argument) >= 2 and argument[0] == argument[-1] and argument[0] in "\"'`":
            argument = argument[1:-1].strip()  # RetrieveArticle["Ada Lovelace"]
        return Action(thought, tool, argument, match.group(0).strip())
    return None


def _snippet(text: str, needle: str | None = None, width: int = SNIPPET_CHARS) -> str:
    """A short one-line extract: around the first occurrence of `needle`, else the text's start."""
    body = "\n".join(line for line in text.splitlines() if not line.startswith("#"))
    flat = _SPACES.sub(" ", body).strip()
    start = 0
    if needle:
        found = flat.lower().find(_SPACES.sub(" ", needle).strip().lower())
        if found > width // 3:
            start = found - width // 3
    if start:
        start = flat.find(" ", start) + 1  # begin on a word
    extract = flat[start : start + width]
    return ("..." if start else "") + extract + ("..." if start + width < len(flat) else "")


class WikiTools:
    """The agent's tools over a SearchIndex; each returns (observation, ids of the documents shown)."""

    def __init__(
        self,
        index: SearchIndex,
        results: int = SEARCH_RESULTS,
        max_article_tokens: int = MAX_ARTICLE_TOKENS,
    ) -> None:
        self.index = index
        self.results = results
        self.max_article_tokens = max_article_tokens

    def search(self, text: str) -> tuple[str, list[str]]:
        """Articles containing `text` (case-insensitive; title matches first), else the best-ranked ones."""
        if not text.strip():
            return "Search needs some text inside the brackets, e.g. Search[Ada Lovelace].", []
        needle = text.strip().casefold()
        found = self.index.documents_containing(text.strip(), SCAN_LIMIT)
        # An article named by the text first, then titles containing it, then the rest in corpus order.
        found = sorted(
            found, key=lambda doc: (doc.title.casefold() != needle, needle not in doc.title.casefold())
        )
        shown = found[: self.results]
        if found:
            count = f"{SCAN_LIMIT} or more" if len(found) >= SCAN_LIMIT else str(len(found))
            header = f"Articles containing {text!r} ({count} found, {len(shown)} shown):"
        else:
            shown = [self.index.document(doc_id) for doc_id, _ in self.index.search(text, self.results)]
            if not shown:
                return f"No articles match {text!r}.", []
            header = f"No article contains {text!r} exactly; the most relevant ones:"
        lines = [header]
        for n, doc in enumerate(shown, 1):
            lines.append(f"{n}. {doc.title or doc.id}: {_snippet(doc.text, text)}")
        return "\n".join(lines), [doc.id for doc in shown]

    def retrieve(self, title: str) -> tuple[str, list[str]]:
        """The article whose title is exactly `title` (case-insensitive), or a not-found message."""
        matches = self.index.by_title(title) if title else []
        if not matches:
            return f"No article titled {title!r}. Use Search[text] to look for similar titles.", []
        doc = matches[0]
        tokens = doc.text.split()
        text = doc.text.strip()
        if len(tokens) > self.max_article_tokens:
            text = " ".join(tokens[: self.max_article_tokens]) + " ... (article cut here)"
        return text, [doc.id]


async def run_react(
    client: LLMClient,
    prompt: Prompt,
    tools: WikiTools,
    question: str,
    *,
    max_steps: int = DEFAULT_MAX_STEPS,
    stage: str = "qa.react",
    date_note: str = "",
    temperature: float = 0.0,
) -> AgentResult:
    """Run the agent on one question until Finish, a failed model call, or `max_steps` steps."""
    messages = prompt.render(question=question, date_note=date_note, max_steps=max_steps)
    result = AgentResult(answer=None)
    seen: set[str] = set()
    for step in range(1, max_steps + 1):
        completion = await client.complete(
            messages, stage=stage, temperature=temperature, stop=["\nObservation"]
        )
        result.completion = completion
        record: dict[str, Any] = {"step": step, "thought": None, "action": None, "observation": None}
        record["usage"] = completion.to_record()["usage"]
        result.trajectory.append(record)
        if not completion.ok:
            record["error"] = completion.error
            result.error = completion.error
            return result
        reply = completion.text or ""
        action = parse_action(reply)
        if action is None:
            record["thought"] = reply.strip()
            observation = FORMAT_HELP
            messages = [
                *messages,
                _turn("assistant", reply.strip()),
                _turn("user", f"Observation: {observation}"),
            ]
            record["observation"] = observation
            continue
        record["thought"] = action.thought
        record["action"] = f"{action.tool}[{action.argument}]"
        if action.tool == "Finish":
            result.answer = action.argument
            return result
        if action.tool == "Search":
            observation, shown = tools.search(action.argument)
        else:
            observation, shown = tools.retrieve(action.argument)
        for doc_id in shown:
            if doc_id not in seen:
                seen.add(doc_id)
                result.retrieved.append(doc_id)
        record["observation"] = observation
        record["documents"] = shown
        # Keep only what the model wrote up to its action: anything after it would be an invented result.
        said = reply[: reply.find(action.text) + len(action.text)].strip() if action.text in reply else reply
        messages = [*messages, _turn("assistant", said), _turn("user", f"Observation: {observation}")]
    result.unanswered = STEP_LIMIT
    return result


def _turn(role: str, content: str) -> dict[str, str]:
    return {"role": role, "content": content}
