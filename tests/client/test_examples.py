"""The examples/ programs run as a user runs them (a subprocess, configured by the environment, turns
on stdin) against the live stack, with the fake OpenAI-compatible server as their LLM."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from hindsight_memory import Hindsight

from tests.client.conftest import new_bank, poll
from tests.conftest import ADMIN_KEY, ROOT
from tests.fake_openai import chat_bodies, reply, script, tool_call


def run_example(name: str, service: str, llm_url: str, bank_id: str, turns: list[str]) -> list[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(ROOT),
        "HINDSIGHT_URL": service,
        "HINDSIGHT_API_KEY": ADMIN_KEY,
        "HINDSIGHT_BANK": bank_id,
        "OPENAI_BASE_URL": llm_url,
        "OPENAI_API_KEY": "test",
        "MODEL": "fake-model",
    }
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / name)],
        input="".join(f"{turn}\n" for turn in turns),
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout.splitlines()


def test_support_agent(hs: Hindsight, service: str, server: tuple[Any, str], worker: Any) -> None:
    fake, llm_url = server
    bank_id = new_bank(hs)
    script(fake, reply("Noted, 5000 EUR."), reply("Your budget is 5000 EUR."))
    fake.state.requests.clear()
    out = run_example(
        "support_agent.py", service, llm_url, bank_id, ["My budget is 5000 EUR.", "What is my budget?"]
    )
    assert out == ["Noted, 5000 EUR.", "Your budget is 5000 EUR."]
    second = chat_bodies(fake)[1]["messages"][0]
    assert second["role"] == "system"
    assert "- user: My budget is 5000 EUR." in second["content"]  # recalled from working memory
    [session] = list(hs.sessions.list(bank_id))
    assert (session.status, session.last_seq) == ("closed", 4)
    poll(
        lambda: [m for m in hs.memories.list(bank_id, tag="constraint.budget") if "5000" in m.content] or None
    )


def test_agents_sdk_agent(hs: Hindsight, service: str, server: tuple[Any, str]) -> None:
    fake, llm_url = server
    bank_id = new_bank(hs)
    write = {"content": "The user's budget is 5000 EUR.", "tags": ["constraint.budget"]}
    script(fake, tool_call("memory_write", write), reply("Saved."))
    fake.state.requests.clear()
    assert run_example("agents_sdk_agent.py", service, llm_url, bank_id, ["My budget is 5000 EUR."]) == [
        "Saved."
    ]
    [unit] = list(hs.memories.list(bank_id))
    assert unit.content == "The user's budget is 5000 EUR."
    tool_output = [m for m in chat_bodies(fake)[1]["messages"] if m["role"] == "tool"]
    assert json.loads(tool_output[0]["content"])["id"] == unit.id


def test_langgraph_agent(hs: Hindsight, service: str, server: tuple[Any, str]) -> None:
    fake, llm_url = server
    bank_id = new_bank(hs)
    hs.memories.write(bank_id, "The user's budget is 5000 EUR.", ["constraint.budget"], wait=True)
    script(fake, tool_call("memory_query", {"query": "budget"}), reply("Your budget is 5000 EUR."))
    fake.state.requests.clear()
    out = run_example("langgraph_agent.py", service, llm_url, bank_id, ["What is my budget?"])
    assert out == ["Your budget is 5000 EUR."]
    tool_output = [m for m in chat_bodies(fake)[1]["messages"] if m["role"] == "tool"]
    assert "The user's budget is 5000 EUR." in tool_output[0]["content"]
