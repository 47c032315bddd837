"""Task episodes (docs/architecture.md, "Task episodes"): the hindsight of a whole task — a request, the steps
taken (tool calls and their results, decisions) and the outcome — as one `episode.task` unit whose metadata is
the seed's structure `{task, steps: [{action, result}], outcome}`.

Both distillers fill `TaskEpisode` (the heuristic from the turns' roles, the LLM as structured JSON);
this module turns one into a candidate unit the same way for both, and reads what the turns' metadata
says about tool calls (`metadata.tool` / `name`, `arguments`, `result`)."""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping
from typing import Any

from app.db.repositories.task_ends import TASK_TAG
from app.distill.types import CORE_KINDS, Candidate, TaskEpisode, TaskStep, Turn

__all__ = ["TASK_TAG", "TaskEpisode", "TaskStep", "to_candidate"]
TASK_CONFIDENCE = 0.85
SUMMARY_MAX_CHARS = 600
PART_MAX_CHARS = 240  # a request, a step's action or result, an outcome, as the summary quotes it
BASE_IMPORTANCE = 0.5
STEP_IMPORTANCE = 0.05  # each step makes the task more worth recalling, up to MAX_STEP_BONUS
MAX_STEP_BONUS = 0.25
OUTCOME_IMPORTANCE = 0.15  # a task with a stated outcome (done, or failed: a lesson) matters more
MAX_IMPORTANCE = 0.95
TOOL_NAME_KEYS = ("tool", "name", "tool_name", "function")
TOOL_ARGUMENT_KEYS = ("arguments", "args", "input", "parameters")
TOOL_RESULT_KEYS = ("result", "output", "response")


def shorten(text: str, limit: int = PART_MAX_CHARS) -> str:
    """One line of at most `limit` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"


def task_importance(steps: int, has_outcome: bool) -> float:
    bonus = min(MAX_STEP_BONUS, STEP_IMPORTANCE * steps) + (OUTCOME_IMPORTANCE if has_outcome else 0.0)
    return round(min(MAX_IMPORTANCE, BASE_IMPORTANCE + bonus), 3)


def domain_tags(tag_lists: Iterable[Iterable[str]]) -> list[str]:
    """The bank's own tags among those of the units distilled from the task's turns (`support.refund`,
    `project.alpha`): the task episode is filed under them too. Core kinds stay off it, so resolution
    never reads a task as a new budget or a new address."""
    found = {t for tags in tag_lists for t in tags if t.split(".", 1)[0] not in CORE_KINDS}
    return sorted(found)


def to_candidate(
    episode: TaskEpisode, seqs: Iterable[int], *, min_steps: int, extra_tags: Iterable[str] = ()
) -> Candidate | None:
    """The `episode.task` candidate, or None when the task has fewer than `min_steps` steps or cites
    no turn of the stretch (`seqs`)."""
    allowed = set(seqs)
    sources = sorted({s for s in episode.source_seqs if s in allowed})
    if not sources or len(episode.steps) < min_steps:
        return None
    steps = [{"action": shorten(s.action), "result": shorten(s.result)} for s in episode.steps]
    importance = episode.importance
    if importance is None:
        importance = task_importance(len(steps), bool(episode.outcome.strip()))
    return Candidate(
        content=shorten(episode.summary, SUMMARY_MAX_CHARS),
        tags=[TASK_TAG, *(t for t in extra_tags if t != TASK_TAG)],
        confidence=TASK_CONFIDENCE,
        importance=importance,
        source_seqs=sources,
        entities=episode.entities,
        metadata={
            "task": shorten(episode.task, 1000),
            "steps": steps,
            "outcome": shorten(episode.outcome, 1000),
        },
    )


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    return json.dumps(value, ensure_ascii=False, sort_keys=True)


def _arguments(value: Any) -> str:
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return str(value)
    if isinstance(value, Mapping):
        return ", ".join(f"{k}={_text(v)}" for k, v in value.items())
    return _text(value)


def _call(name: Any, arguments: Any) -> str:
    args = _arguments(arguments)
    return f"{_text(name)}({args})" if args else _text(name)


def tool_calls(turn: Turn) -> list[str]:
    """The calls an assistant turn asks for (`metadata.tool_calls`, OpenAI's shape or flat
    `{name, arguments}`; or a single `metadata.tool`), each as `name(arguments)`."""
    meta = turn.metadata
    calls = meta.get("tool_calls")
    if isinstance(calls, list):
        found = []
        for call in calls:
            if not isinstance(call, Mapping):
                continue
            function = call.get("function")
            spec = function if isinstance(function, Mapping) else call
            if spec.get("name"):
                found.append(_call(spec["name"], spec.get("arguments")))
        return found
    if turn.role == "assistant" and isinstance(meta.get("tool"), str):
        return [_call(meta["tool"], _first(meta, TOOL_ARGUMENT_KEYS))]
    return []


def _first(meta: Mapping[str, Any], keys: tuple[str, ...]) -> Any:
    return next((meta[k] for k in keys if meta.get(k) not in (None, "")), None)


def tool_name(turn: Turn) -> str | None:
    """The name of the call a tool turn answers, from its metadata (flat or OpenAI's `function` shape)."""
    name = _first(turn.metadata, TOOL_NAME_KEYS)
    if isinstance(name, Mapping):
        name = name.get("name")
    return name if isinstance(name, str) else None


def tool_step(turn: Turn, called: str | None) -> TaskStep:
    """A tool turn as a step: the call (from its metadata, else the assistant's pending call, else the
    tool's name alone) and its result (`metadata.result`, else the turn's text)."""
    meta = turn.metadata
    name = _first(meta, TOOL_NAME_KEYS)
    if isinstance(name, Mapping):  # {"function": {"name": …, "arguments": …}}
        action = _call(name.get("name") or "tool", name.get("arguments"))
    elif name is not None:
        action = _call(name, _first(meta, TOOL_ARGUMENT_KEYS))
        if called and called.startswith(f"{_text(name)}(") and action == _text(name):
            action = called  # the assistant's call carries the arguments the tool turn leaves out
    else:
        action = called or (turn.speaker or "tool")
    result = _text(_first(meta, TOOL_RESULT_KEYS)) or turn.content
    return TaskStep(action=shorten(action), result=shorten(result))


def plausible(turns: list[Turn], min_steps: int) -> bool:
    """Whether the stretch can hold a task at all: a user turn followed by enough turns of other
    roles to be `min_steps` steps and an outcome. An LLM is asked only then."""
    first_user = next((i for i, t in enumerate(turns) if t.role == "user" and t.content.strip()), None)
    if first_user is None:
        return False
    later = turns[first_user + 1 :]
    if not any(t.role == "assistant" for t in later):
        return False
    results = sum(t.role == "tool" for t in later)
    calls = sum(len(tool_calls(t)) for t in later if t.role == "assistant")
    return max(results, calls) >= max(min_steps, 1)  # a call and its tool turn are one step
