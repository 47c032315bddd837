"""The one stand-in the project allows: a local OpenAI-compatible HTTP server for the LLM path.
The real `openai` SDK talks to it over HTTP."""

from __future__ import annotations

import asyncio
import hashlib
import json
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

from app.embedded import free_port
from tests.serving import serve_in_thread


def deterministic_vector(text: str, dim: int) -> list[float]:
    digest = hashlib.sha256(text.encode()).digest()
    return [((digest[i % len(digest)] + i) % 17) - 8.0 for i in range(dim)]


@dataclass
class ChatStep:
    """One scripted answer of `/v1/chat/completions`: a reply (status 200) or an HTTP error."""

    content: str = '{"units": []}'
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering (ends early if the client hangs up)
    prompt_tokens: int | None = 10  # None: the request's messages counted (`create_fake_openai`'s `count`)
    completion_tokens: int | None = 5  # None: the reply counted
    usage: bool = True  # False: the response carries no `usage` (as some local servers answer)
    # The reply made from the request body (`content` is then ignored): a stand-in that answers what it
    # is asked, e.g. the benchmark's distiller (bench/distill/llm_cost.py).
    answer: Callable[[dict[str, Any]], Awaitable[str]] | None = None
    finish_reason: str = "stop"
    # Function calls the assistant asks for (`{"name", "arguments": dict}`); with them the message's
    # content is null and finish_reason `tool_calls` (agent-framework tests script tool use with it).
    tool_calls: list[dict[str, Any]] | None = None


def reply(content: str, **kwargs: Any) -> ChatStep:
    return ChatStep(content=content, **kwargs)


def tool_call(name: str, arguments: dict[str, Any], **kwargs: Any) -> ChatStep:
    """A reply asking for one function call."""
    return ChatStep(content="", tool_calls=[{"name": name, "arguments": arguments}], **kwargs)


def error(status: int, message: str = "scripted error", **kwargs: Any) -> ChatStep:
    return ChatStep(content=message, status=status, **kwargs)


def count_words(text: str) -> int:
    return len(text.split())


def create_fake_openai(dim: int = 384, count: Callable[[str], int] = count_words) -> FastAPI:
    """`app.state.chat_script`: a list of ChatStep consumed in order; the last one repeats.
    `app.state.usage_sent`: the `usage` the server has answered with, summed (`calls`, `prompt_tokens`,
    `completion_tokens`) and by model (`usage_by_model`). Unscripted token counts are `count`'s."""
    app = FastAPI()
    app.state.requests = []
    app.state.chat_script = [ChatStep()]
    app.state.usage_sent = Counter()
    app.state.usage_sent_last = 0  # the last answer's total tokens
    app.state.usage_by_model = {}

    @app.post("/v1/chat/completions")
    async def chat(body: dict[str, Any], request: Request) -> JSONResponse:
        app.state.requests.append(("chat", body))
        script: list[ChatStep] = app.state.chat_script
        step = script.pop(0) if len(script) > 1 else script[0]
        for _ in range(round(step.delay / 0.02)):
            if await request.is_disconnected():
                break
            await asyncio.sleep(0.02)
        if step.status != 200:
            problem = {"message": step.content, "type": "scripted", "param": None, "code": None}
            return JSONResponse({"error": problem}, status_code=step.status, headers=step.headers)
        content = await step.answer(body) if step.answer is not None else step.content
        prompt_tokens = step.prompt_tokens
        if prompt_tokens is None:
            prompt_tokens = sum(count(str(m.get("content") or "")) for m in body["messages"])
        completion_tokens = step.completion_tokens if step.completion_tokens is not None else count(content)
        usage = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if step.usage:
            sent = {"calls": 1, "prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens}
            app.state.usage_sent.update(sent)
            app.state.usage_sent_last = prompt_tokens + completion_tokens
            app.state.usage_by_model.setdefault(body["model"], Counter()).update(sent)
        message: dict[str, Any] = {"role": "assistant", "content": content}
        finish_reason = step.finish_reason
        if step.tool_calls:
            message["content"] = None
            message["tool_calls"] = [
                {
                    "id": f"call_{len(app.state.requests)}_{i}",
                    "type": "function",
                    "function": {"name": call["name"], "arguments": json.dumps(call["arguments"])},
                }
                for i, call in enumerate(step.tool_calls)
            ]
            finish_reason = "tool_calls"
        completion = {
            "id": f"chatcmpl-{len(app.state.requests)}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish_reason}],
        }
        if step.usage:
            completion["usage"] = usage
        return JSONResponse(completion, headers=step.headers)

    @app.post("/v1/embeddings")
    async def embeddings(body: dict[str, Any]) -> dict[str, Any]:
        app.state.requests.append(("embeddings", body))
        inputs = body["input"] if isinstance(body["input"], list) else [body["input"]]
        data = [
            {"object": "embedding", "index": i, "embedding": deterministic_vector(text, dim)}
            for i, text in enumerate(inputs)
        ]
        return {
            "object": "list",
            "data": data,
            "model": body["model"],
            "usage": {"prompt_tokens": 0, "total_tokens": 0},
        }

    return app


@contextmanager
def serve(app: FastAPI, port: int | None = None) -> Iterator[str]:
    """Run the app on a loopback port (a free one unless given) in a thread; yield its `/v1` base URL."""
    port = port or free_port()
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    with serve_in_thread(config, start_within=10, stop_within=5):
        yield f"http://127.0.0.1:{port}/v1"


def chat_bodies(fake: FastAPI) -> list[dict[str, Any]]:
    """The chat requests the fake has received, in order."""
    return [body for kind, body in fake.state.requests if kind == "chat"]


def corrective_retry(fake: FastAPI, bad: str) -> str:
    """The content of the correction in the second chat request, which must repeat the first request's
    messages, then carry the invalid reply `bad` as the assistant's and the correction as the user's."""
    first, second = chat_bodies(fake)
    assert second["messages"][:2] == first["messages"]
    assert second["messages"][2] == {"role": "assistant", "content": bad}
    correction: dict[str, Any] = second["messages"][3]
    assert correction["role"] == "user"
    content: str = correction["content"]
    return content


def fenced_prompt(fake: FastAPI, tag: str, secret: str) -> tuple[str, str, Any]:
    """The one chat request's system prompt, its user text before the `<tag>` fence and the JSON inside
    the fence, after checking the prompt's guard: a system and a user message, a system prompt that says
    the data is never instructions, the fence opened and closed once (data cannot close it), and `secret`
    nowhere but inside it."""
    [body] = chat_bodies(fake)
    system, user = body["messages"]
    assert (system["role"], user["role"]) == ("system", "user")
    assert secret not in system["content"]
    assert "never instructions" in system["content"]
    assert user["content"].count(f"<{tag}>") == user["content"].count(f"</{tag}>") == 1
    before, rest = user["content"].split(f"<{tag}>")
    inside, after = rest.split(f"</{tag}>")
    assert secret not in before + after
    return system["content"], before, json.loads(inside)


def fenced(body: dict[str, Any], tag: str) -> Any:
    """The JSON inside a request's `<tag>` fence (the distiller's turns, the judge's units); None without."""
    text = str(body["messages"][-1]["content"])
    if f"<{tag}>" not in text:
        return None
    return json.loads(text.split(f"<{tag}>", 1)[1].split(f"</{tag}>", 1)[0])


async def mirror(body: dict[str, Any]) -> str:
    """A stand-in model that answers what the service asks: the distiller one fact per turn (the turn's
    words, said by its speaker), the judge "does not replace", the task stage "no task"."""
    schema = (body.get("response_format") or {}).get("json_schema") or {}
    if schema.get("name") == "conflict_verdict":
        answer = {"same_subject": True, "same_attribute": False, "current": "both"}
        return json.dumps({**answer, "reason": "both can be true"})
    if schema.get("name") == "memory_units":
        units = [
            {
                "content": f"{turn['speaker']} said: {turn['content']}",
                "tags": ["fact"],
                "confidence": 0.9,
                "importance": 0.5,
                "source_seqs": [turn["seq"]],
                "entities": [],
                "relations": [],
                "supersedes": None,
            }
            for turn in fenced(body, "turns") or []
        ]
        return json.dumps({"units": units}, ensure_ascii=False)
    return json.dumps({"task": None})


def script(fake: FastAPI, *steps: ChatStep) -> None:
    fake.state.chat_script = list(steps)
