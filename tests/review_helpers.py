"""Benchmarks and a server process shared by the `irbgen review` tests."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import httpx
from sample_builds import REPO

from irbgen.benchmark import write_benchmark
from irbgen.schema import Document, Hop, Manifest, Provenance, Sample

# Text an evil web page could hold: each would run script, or leak, if it reached the page as markup.
SCRIPT_TAG = '<script>window.pwned = "script"</script>'
ONERROR = '<img src="x" onerror="window.pwned = \'img\'">'
JS_LINK = "<a href=\"javascript:window.pwned='link'\">click me</a>"
# Markup before the highlighted passage, inside it and after it (each part of the page escapes its own).
HOSTILE_TEXT = (
    f"Intro {SCRIPT_TAG} here. Filler one is here. Filler two is here. Filler three is here. Filler four "
    f"is here. Lake Orrin drains south through the River Vell {SCRIPT_TAG}{ONERROR}. Filler five is here. "
    f"Filler six is here. Filler seven is here. Filler eight is here. Outro {JS_LINK} there."
)


def hostile_benchmark(out: Path) -> Path:
    """A two-document benchmark whose question, answers, titles, URLs and text are all markup."""
    documents = [
        Document(
            id="d-evil",
            title="<b onmouseover=\"window.pwned='title'\">Evil title</b>",
            text=HOSTILE_TEXT,
            metadata={"url": "javascript:window.pwned='url'"},
        ),
        Document(
            id="d-quote",
            title="Quoted address",
            text="Lake Orrin drains south through the River Vell.",
            metadata={"url": 'https://example.org/a"><script>window.pwned="attr"</script>'},
        ),
    ]
    sample = Sample(
        id="evil-1",
        question=f"Which lake {SCRIPT_TAG} drains south?",
        answers=[ONERROR],
        hops=1,
        source="wikipedia",
        evidence=["d-evil", "d-quote"],
        chain=[Hop(index=0, operation="lookup", question=JS_LINK, answers=[ONERROR], evidence=["d-evil"])],
        provenance=Provenance(
            generator="test", keypoints=[f"Lake Orrin drains south through the River Vell {SCRIPT_TAG}."]
        ),
    )
    manifest = Manifest(tool_version="0", source="wikipedia", name="hostile", command="test")
    write_benchmark(out, documents, [sample], manifest)
    return out


class ReviewServer:
    """`irbgen review` run as a real process on a free port, reached at 127.0.0.1; stop() sends Ctrl-C."""

    def __init__(self, benchmark: Path, *args: str) -> None:
        command = [sys.executable, "-m", "irbgen", "review", str(benchmark), "--port", "0", *args]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(
            command, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        self.lines = [self.process.stdout.readline(), self.process.stdout.readline()]
        found = re.search(r"http://[^\s/]+:(\d+)/", self.lines[-1])
        if found is None:
            self.process.kill()
            raise RuntimeError(f"no address in {self.lines!r}: {self.process.stderr.read()}")
        self.port = int(found.group(1))
        self.url = f"http://127.0.0.1:{self.port}/"
        # the socket listens before the server runs: the first answer means it is serving
        httpx.get(self.url, headers={"Host": f"localhost:{self.port}"}, timeout=20, trust_env=False)

    def stop(self) -> tuple[int, str, str]:
        """Send SIGINT and return (exit code, rest of stdout, stderr)."""
        self.process.send_signal(signal.SIGINT)
        out, err = self.process.communicate(timeout=20)
        return self.process.returncode, out, err
