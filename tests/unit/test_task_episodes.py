"""Task episodes' pure logic: the offline detector (request, steps, outcome from the turns' roles), the
candidate it becomes, the stretches a session's task ends cut, and reading the LLM's reply."""

from __future__ import annotations

import json
from datetime import UTC
from typing import Any

import pytest

from app.distill.episodes import stretches
from app.distill.heuristic.task_detector import detect_task
from app.distill.llm import LLMDistiller
from app.distill.llm_tasks import parse_task
from app.distill.task_episode import plausible, task_importance, to_candidate
from app.distill.types import DistillContext, Turn
from tests.factories import turn
from tests.fake_openai import chat_bodies, reply, script


def tool(seq: int, content: str, **metadata: Any) -> Turn:
    return Turn(seq, 100 + seq, "tool", content, None, turn(seq, "").occurred_at, metadata)


def said(seq: int, content: str, role: str = "user", **metadata: Any) -> Turn:
    base = turn(seq, content, role=role, speaker=None)
    return Turn(base.seq, base.event_id, role, content, None, base.occurred_at, metadata)


def ctx(*turns: Turn) -> DistillContext:
    return DistillContext("b", "s", list(turns), UTC)


SUPPORT = (
    said(1, "Hello!"),
    said(2, "My parcel ORD-555 never arrived. Please resend it."),
    said(3, "", "assistant", tool_calls=[{"name": "track", "arguments": {"order": "ORD-555"}}]),
    tool(4, "Lost in transit.", result="lost"),
    said(5, "I checked with the carrier: the parcel was lost.", "assistant"),
    tool(6, "Resent as SHP-901.", tool="resend", arguments='{"order": "ORD-555"}'),
    said(7, "I have resent your order as SHP-901; it arrives Friday.", "assistant"),
    said(8, "Thanks, bye!"),
)


def test_the_detector_reads_request_steps_and_outcome_from_the_roles() -> None:
    episode = detect_task(ctx(*SUPPORT), min_steps=1)
    assert episode is not None
    # The tool turn without a name takes the assistant's pending call; reports are steps too.
    assert [(s.action, s.result) for s in episode.steps] == [
        ("track(order=ORD-555)", "lost"),
        ("I checked with the carrier: the parcel was lost.", ""),
        ("resend(order=ORD-555)", "Resent as SHP-901."),
    ]
    assert episode.outcome == "I have resent your order as SHP-901; it arrives Friday."
    assert episode.task == "The user's parcel ORD-555 never arrived. Please resend it."
    assert episode.source_seqs == [2, 3, 4, 5, 6, 7]  # the greeting and the thanks are not the task's
    assert {e.name for e in episode.entities} >= {"ORD-555", "SHP-901"}
    candidate = to_candidate(episode, range(1, 9), min_steps=1, extra_tags=["support.delivery"])
    assert candidate is not None
    assert candidate.tags == ["episode.task", "support.delivery"]
    assert candidate.metadata["steps"][0] == {"action": "track(order=ORD-555)", "result": "lost"}
    assert candidate.importance == task_importance(3, True)
    assert "\n" not in candidate.content


@pytest.mark.parametrize(
    "turns",
    [
        (said(1, "Hi there!"), said(2, "Hello! How can I help?", "assistant")),
        (said(1, "What time is it in Lisbon?"), said(2, "It is 10:00 in Lisbon.", "assistant")),
        (said(1, "Please cancel order ORD-1."), tool(2, "Cancelled.", tool="cancel")),  # no answer
    ],
    ids=["greetings", "no-steps", "no-outcome"],
)
def test_no_task_without_request_steps_and_outcome(turns: tuple[Turn, ...]) -> None:
    assert detect_task(ctx(*turns), min_steps=1) is None


def test_min_steps_and_the_chinese_summary() -> None:
    turns = (
        said(1, "我的订单ORD-8坏了，请帮我换货。"),
        tool(2, "换货单EX-1已创建", tool="exchange", result="EX-1"),
        said(3, "已为您创建换货单EX-1，明天发出。", "assistant"),
    )
    assert detect_task(ctx(*turns), min_steps=2) is None
    episode = detect_task(ctx(*turns), min_steps=1)
    assert episode is not None
    assert episode.summary.startswith("任务：用户的订单ORD-8坏了")
    assert "exchange → EX-1" in episode.summary
    assert episode.summary.endswith("结果：已为您创建换货单EX-1，明天发出。")


def test_stretches_start_at_the_previous_end_and_wait_for_distillation() -> None:
    assert stretches([5, 9, 14], done=0, distilled_seq=10) == [(0, 5), (5, 9)]
    assert stretches([5, 9, 14], done=9, distilled_seq=20) == [(9, 14)]
    assert stretches([5], done=5, distilled_seq=20) == []
    assert stretches([900], done=0, distilled_seq=900) == [(700, 900)]  # a task is the stretch's tail


def test_the_llm_is_asked_only_about_a_stretch_with_tool_calls() -> None:
    assert plausible(list(SUPPORT), 1)
    assert not plausible(list(SUPPORT), 3)  # two tool turns and one call
    assert not plausible([said(1, "Plan my trip."), said(2, "Here is a plan.", "assistant")], 1)


def test_the_llm_reply_is_read_with_or_without_its_wrapper() -> None:
    task = {"summary": "s", "task": "t", "steps": [{"action": "a"}], "outcome": "o", "source_seqs": [1]}
    wrapped = parse_task({"task": task})
    assert wrapped is not None
    assert wrapped.steps[0].result == ""
    assert parse_task(task) == wrapped
    assert parse_task({"task": None}) is None
    with pytest.raises(ValueError, match="expected JSON object"):
        parse_task({"units": []})


async def test_the_llm_task_call_sees_the_tool_turns_and_is_skipped_without_them(
    server: tuple[Any, str], chat_client: Any
) -> None:
    fake, _ = server
    fake.state.requests = []
    distiller = LLMDistiller(chat_client())
    task = {"summary": "Resent ORD-555.", "task": "Resend", "outcome": "Sent", "source_seqs": [2]}
    script(fake, reply(json.dumps({"task": task})))
    result = await distiller.task(ctx(*SUPPORT), 1)
    assert result.episode is not None
    assert result.episode.summary == "Resent ORD-555."
    assert result.usage["calls"] == 1
    [body] = chat_bodies(fake)
    data = body["messages"][1]["content"]
    assert "<turns>" in data
    assert '"resend"' in data  # the tool turn's metadata
    assert "track(order=ORD-555)" in data  # the assistant's call
    # A stretch that holds no tool call costs no call.
    skipped = await distiller.task(ctx(said(1, "Plan my trip."), said(2, "Here it is.", "assistant")), 1)
    assert skipped.episode is None
    assert len(chat_bodies(fake)) == 1
