"""A client that serves one event loop per stage closes each loop's connections on that loop: an
LLM-backed command ends without "Task exception was never retrieved ... Event loop is closed"."""

from __future__ import annotations

import asyncio
import gc
import logging
import os
import subprocess
import sys

from sample_builds import SAMPLE_DUMP, SAMPLE_WARC
from test_irb_build import _llm_reply

from irbgen.llm.client import LLMClient
from irbgen.llm.settings import LLMSettings
from irbgen.testing import OpenAIStubServer


def test_a_client_across_several_loops_leaves_nothing_to_close_on_a_dead_one(caplog):
    with OpenAIStubServer() as server:
        client = LLMClient(LLMSettings(base_url=server.base_url, model="m"))

        async def ask(text: str) -> str | None:
            return (await client.complete([{"role": "user", "content": text}], stage="s")).text

        with caplog.at_level(logging.ERROR, logger="asyncio"):
            # One asyncio.run per stage, as the build runs them, then the close in a loop of its own.
            assert [asyncio.run(ask(word)) for word in ("one", "two", "three")] == ["one", "two", "three"]
            asyncio.run(client.aclose())
            asyncio.run(asyncio.sleep(0))  # a close wrongly scheduled on a later loop would run here
            gc.collect()
    assert not [record.getMessage() for record in caplog.records]


def test_an_llm_backed_build_exits_without_a_traceback(tmp_path):
    with OpenAIStubServer(responder=_llm_reply) as server:
        command = ["build", "--source", "wikipedia-dump", "--dump", SAMPLE_DUMP, "--warc", SAMPLE_WARC]
        command += ["--offline", "--llm", "openai", "--base-url", server.base_url, "--model", "stub"]
        command += ["--out", tmp_path / "run"]
        env = {**os.environ, "OPENAI_API_KEY": "unused", "PYTHONWARNINGS": "always::ResourceWarning"}
        done = subprocess.run(
            [sys.executable, "-m", "irbgen", *map(str, command)], env=env, capture_output=True, text=True
        )
    assert done.returncode == 0, done.stderr
    assert server.requests > 10  # every LLM stage ran, each on its own event loop
    for symptom in ("Traceback", "never retrieved", "Event loop is closed", "ResourceWarning"):
        assert symptom not in done.stderr, done.stderr
