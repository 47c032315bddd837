"""The offline task detector: a task built from the turns' roles (docs/architecture.md, "Task episodes").

The request is the first user turn that asks for something (not a greeting); the steps are the tool
turns after it (their call and result) and the assistant's reports of what it did ("I checked the
warranty: …") before its last answer; the outcome is the assistant's last turn that says something.
A stretch without a request, without an answer, or with fewer than the bank's `episode_min_steps`
steps holds no task."""

from __future__ import annotations

import re

from app.distill.heuristic import clean
from app.distill.heuristic.entities import dedupe_entities, find_entities
from app.distill.heuristic.person import first_person_to_speaker
from app.distill.task_episode import TaskEpisode, TaskStep, shorten, tool_calls, tool_step
from app.distill.types import MAX_TASK_STEPS, DistillContext, Turn
from app.entities.types import EntityOut
from app.text import has_cjk, split_sentences

# An assistant turn that reports something done (not an offer, a question or a promise).
ACTION_EN = re.compile(
    r"\b(?:checked|verified|looked up|found|created|issued|sent|shipped|refunded|cancell?ed|booked|"
    r"updated|scheduled|ordered|replaced|escalated|confirmed|reset|searched|filed|opened|approved|"
    r"processed|arranged|reserved|contacted|ran|tested|fixed|deployed|submitted|resolved)\b",
    re.IGNORECASE,
)
ACTION_ZH = re.compile(r"已(?:经)?[\u4e00-\u9fff]|查询了|查到|核实了|确认了|发送了|安排了|办理了|提交了")
FUTURE_EN = re.compile(r"\b(?:will|'ll|going to|let me|can i|shall i|would you)\b", re.IGNORECASE)


def _speaker(turn: Turn, zh: bool) -> tuple[str, bool]:
    if turn.speaker:
        return turn.speaker, True
    return ("用户" if zh else "The user"), False


def _said(turn: Turn, names: set[str]) -> list[str]:
    """The sentences of a turn that are not small talk, their wrapping taken off."""
    return [
        clean.strip_wrapping(s) for s in split_sentences(turn.content) if not clean.is_small_talk(s, names)
    ]


def _is_request(turn: Turn, names: set[str]) -> bool:
    text = " ".join(_said(turn, names))
    return len(text) >= 4 if has_cjk(text) else len(clean.content_words(text, names)) >= 2


def _report(turn: Turn, names: set[str]) -> str | None:
    """What an assistant turn before the answer says it did, or None."""
    for sentence in _said(turn, names):
        zh = has_cjk(sentence)
        if zh and ACTION_ZH.search(sentence):
            return sentence
        if not zh and ACTION_EN.search(sentence) and not FUTURE_EN.search(sentence):
            return sentence
    return None


def detect_task(context: DistillContext, min_steps: int) -> TaskEpisode | None:
    turns = [t for t in context.turns if t.role != "system"]
    names = {t.speaker for t in turns if t.speaker}
    start = next((i for i, t in enumerate(turns) if t.role == "user" and _is_request(t, names)), None)
    if start is None:
        return None
    request, rest = turns[start], turns[start + 1 :]
    answers = [i for i, t in enumerate(rest) if t.role == "assistant" and _said(t, names)]
    if not answers:
        return None
    outcome_turn = rest[answers[-1]]
    steps: list[TaskStep] = []
    seqs = [request.seq]
    calls: list[str] = []  # asked for by the assistant, answered by the tool turns that follow
    for turn in rest[: answers[-1]]:
        if turn.role == "tool":
            steps.append(tool_step(turn, calls.pop(0) if calls else None))
            seqs.append(turn.seq)
        elif turn.role == "assistant":
            asked = tool_calls(turn)
            calls += asked
            report = None if asked else _report(turn, names)
            if report is not None:
                steps.append(TaskStep(action=shorten(report)))
            if asked or report is not None:
                seqs.append(turn.seq)
        elif _said(turn, names):  # the user adds details on the way ("it's order ORD-20417")
            seqs.append(turn.seq)
    if len(steps) < min_steps:
        return None
    steps = steps[-MAX_TASK_STEPS:]  # a task of hundreds of tool calls: the last ones led to the outcome
    seqs.append(outcome_turn.seq)
    zh = has_cjk(request.content)
    speaker, named = _speaker(request, zh)
    task = shorten(first_person_to_speaker(" ".join(_said(request, names)), speaker, named))
    outcome = shorten(" ".join(_said(outcome_turn, names)))
    done = "; ".join(f"{s.action} → {s.result}" if s.result else s.action for s in steps)
    # The request names the speaker already ("The user's order … arrived damaged").
    if zh:
        task = task.rstrip("。！？.!?")
        summary = f"任务：{task}" + (f"；步骤：{done}" if done else "") + f"；结果：{outcome}"
    else:
        summary = f"Task: {_sentence(task)}" + (f" Steps: {done}." if done else "") + f" Outcome: {outcome}"
    text = f"{task} {outcome}"
    entities = find_entities(text, "zh" if zh else "en", ["episode"])
    if named:
        entities.insert(0, EntityOut(name=speaker, type="person"))
    entities = [e for e in dedupe_entities(entities) if clean.worth_a_node(e, () if named else (speaker,))]
    return TaskEpisode(
        summary=summary,
        task=task,
        steps=steps,
        outcome=outcome,
        source_seqs=sorted(set(seqs)),
        entities=entities,
    )


def _sentence(text: str) -> str:
    return text if text.endswith((".", "!", "?", "…")) else text + "."
