"""README.md runs top to bottom: every `bash` block, in order, in a fresh directory.

The directory holds links to data/, pipelines/ and bench/, as a clone would. `irbgen` on PATH is this
checkout. Left out: install lines (CI's .ci/run runs them), the lines that start or stop the stub server
(the test serves one itself, and the README's URL is pointed at it), blocks after
`<!-- readme-test: skip (why) -->`, and blocks after `<!-- readme-test: slow -->` unless
IRBGEN_README_SLOW=1 (a step of its own in .ci/run).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from irbgen.testing.openai_server import OpenAIStubServer

ROOT = Path(__file__).resolve().parents[1]
MARKER = re.compile(r"^<!-- readme-test: (skip|slow)(?: \((.+)\))? -->$")
INSTALL = re.compile(r"^(sudo |apt-get |pip |python3? -m (pip|venv) )")
STUB = re.compile(r"^(python -m irbgen\.testing\.openai_server\b|kill %1\b)")
README_URL = "http://127.0.0.1:8000/v1"
SLOW = os.environ.get("IRBGEN_README_SLOW") == "1"


@dataclass
class Block:
    line: int  # where the block starts in the README, for messages
    mark: str  # "", "skip" or "slow"
    commands: list[str]


def shell_blocks(text: str) -> list[Block]:
    """The README's bash blocks in order, each as its commands (continuation lines joined)."""
    blocks: list[Block] = []
    mark, lines, start, inside = "", [], 0, False
    for number, line in enumerate(text.splitlines(), start=1):
        if inside:
            if line.strip() == "```":
                blocks.append(Block(start, mark, _commands(lines)))
                mark, lines, inside = "", [], False
            else:
                lines.append(line)
        elif line.strip() == "```bash":
            inside, start = True, number
        elif MARKER.match(line.strip()):
            mark = MARKER.match(line.strip()).group(1)
        elif line.strip():
            mark = ""  # a marker applies only to the block right after it
    return blocks


def _commands(lines: list[str]) -> list[str]:
    commands, current = [], ""
    for line in lines:
        current += line.rstrip()
        if current.endswith("\\"):
            current = current[:-1] + " "
            continue
        command = current.strip()
        current = ""
        if command and not command.startswith("#"):
            commands.append(command)
    return commands


def runnable(command: str) -> bool:
    """Whether the README test runs this command (install lines and the stub server's own are left out)."""
    return not INSTALL.match(command) and not STUB.match(command)


def test_the_extractor_reads_markers_continuations_and_comments() -> None:
    text = "\n".join([
        "<!-- readme-test: skip (needs a key) -->",
        "```bash",
        "export KEY=...",
        "```",
        "prose",
        "```bash",
        "irbgen a \\",
        "    --b c   # trailing",
        "# output",
        "pip install -e .",
        "```",
        "<!-- readme-test: slow -->",
        "",
        "```bash",
        "irbgen slow",
        "```",
        "<!-- readme-test: slow -->",
        "then prose",
        "```bash",
        "irbgen fast",
        "```",
    ])
    blocks = shell_blocks(text)
    assert [(b.mark, b.commands) for b in blocks] == [
        ("skip", ["export KEY=..."]),
        ("", ["irbgen a      --b c   # trailing", "pip install -e ."]),
        ("slow", ["irbgen slow"]),
        ("", ["irbgen fast"]),
    ]
    assert [runnable(c) for c in blocks[1].commands] == [True, False]
    assert not runnable("python3 -m venv .venv && . .venv/bin/activate")
    assert not runnable("python -m irbgen.testing.openai_server --port 8000 &")


@pytest.fixture()
def workdir(tmp_path: Path) -> Path:
    for name in ("data", "pipelines", "bench"):
        (tmp_path / name).symlink_to(ROOT / name)
    bin_dir = tmp_path / ".bin"
    bin_dir.mkdir()
    shim = bin_dir / "irbgen"
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" -m irbgen "$@"\n')
    shim.chmod(0o755)
    return tmp_path


def test_the_readme_runs_top_to_bottom(workdir: Path) -> None:
    blocks = shell_blocks((ROOT / "README.md").read_text(encoding="utf-8"))
    path = [str(workdir / ".bin"), str(Path(sys.executable).parent), os.environ["PATH"]]
    env = {**os.environ, "PATH": os.pathsep.join(path), "PYTHONPATH": str(ROOT)}
    env.pop("OPENAI_API_KEY", None)
    ran = 0
    with OpenAIStubServer() as server:
        for block in blocks:
            if block.mark == "skip" or (block.mark == "slow" and not SLOW):
                continue
            for command in filter(runnable, block.commands):
                command = command.replace(README_URL, server.base_url)
                done = subprocess.run(["bash", "-c", f"set -euo pipefail\n{command}"], cwd=workdir, env=env,
                                      capture_output=True, text=True, timeout=300)
                assert done.returncode == 0, f"README.md:{block.line}: {command}\n{done.stderr[-2000:]}"
                assert "Traceback" not in done.stderr, f"README.md:{block.line}: {command}\n{done.stderr}"
                ran += 1
    assert ran >= 20  # the README's examples, not an empty walk
    assert (workdir / "report-all" / "report.md").is_file() and (workdir / "compare" / "compare.md").is_file()
    if SLOW:
        assert (workdir / "eval-hybrid" / "metrics.json").is_file()
