"""The one OpenAI-compatible JSON chat client, used by the LLM distiller, the conflict judge and the merge
summariser: any server that speaks `/v1/chat/completions` (OpenAI, vLLM, Ollama, …) through the `openai` SDK.

A call asks for JSON: structured output with the caller's JSON schema first, JSON mode when the server
refuses it with a 400 (remembered for the client's next calls, i.e. for that server). The reply's code
fences are stripped, broken JSON is repaired (`json_repair`), the caller's parser validates it (pydantic),
and an invalid reply gets one corrective retry that carries the validation error. Transport retries
(429 / 5xx / timeouts, with backoff and Retry-After) are the SDK's own. Every request is counted into the
caller's usage and recorded (`app.providers.metering`: operation, model, tokens, latency, outcome, bank, job).
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast

import json_repair
import openai
from openai import AsyncOpenAI
from pydantic import BaseModel

from app.providers.metering import (
    CallRecorder,
    LLMCall,
    Operation,
    Outcome,
    count_message_tokens,
    count_tokens,
    current_charge,
)

if TYPE_CHECKING:
    from openai.types.chat import ChatCompletion, ChatCompletionMessageParam
    from openai.types.chat.chat_completion import Choice
    from openai.types.chat.completion_create_params import ResponseFormat

    from app.config import Settings

T = TypeVar("T")

USAGE_KEYS = ("prompt_tokens", "completion_tokens", "total_tokens")
MAX_ERROR_CHARS = 2000
_FENCE = re.compile(r"```[A-Za-z0-9_-]*[ \t]*\n?(.*?)(?:```|\Z)", re.DOTALL)


class EmptyReply(openai.OpenAIError):
    """The server answered with no choices."""


class InvalidReply(ValueError):
    """The reply was still invalid after the corrective retry; the message is the last error."""


@dataclass(frozen=True)
class Reply(Generic[T]):
    """What a caller wants back from the model, and how to read it."""

    parse: Callable[[Any], T]  # the loaded JSON → the result; ValueError (pydantic's too) when invalid
    expected: str  # the wanted shape, for error messages: 'a JSON object {"units": [...]}'
    cut_off_hint: str  # what to do about a reply cut off at the token limit
    schema_name: str | None = None  # with `schema`: structured output, else JSON mode only
    schema: dict[str, object] | None = None
    correction: str | None = None  # "Reply again with <this> only ..."; None: no corrective retry

    @classmethod
    def json_object(
        cls, shape: str, parse: Callable[[Any], T], model: type[BaseModel], cut_off_hint: str, *, name: str
    ) -> Reply[T]:
        """A reply that is one JSON object `shape` ('{"units": [...]}'), asked for with `model`'s JSON
        schema under `name` and corrected once when invalid."""
        return cls(
            parse=parse,
            expected=f"a JSON object {shape}",
            cut_off_hint=cut_off_hint,
            schema_name=name,
            schema=model.model_json_schema(),
            correction=f"the corrected JSON object {shape}",
        )

    def response_format(self) -> ResponseFormat | None:
        if self.schema is None or self.schema_name is None:
            return None
        return {
            "type": "json_schema",
            "json_schema": {"name": self.schema_name, "schema": self.schema, "strict": False},
        }


class JSONChatClient:
    def __init__(
        self,
        *,
        base_url: str | None,
        api_key: str,
        model: str,
        timeout: float = 60.0,
        max_retries: int = 3,
        operation: str = "other",
        recorder: CallRecorder | None = None,
    ) -> None:
        self.model = model
        self.operation = operation  # what the ledger files its calls under: distill, judge, summarise
        self._recorder = recorder
        self._openai = AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=max_retries
        )
        self._json_schema_supported = True  # set False once the server refuses json_schema with a 400

    @classmethod
    def from_settings(
        cls,
        settings: Settings,
        operation: Operation,
        *,
        recorder: CallRecorder | None = None,
        timeout: float | None = None,
        max_retries: int | None = None,
    ) -> JSONChatClient:
        """The configured server and the operation's model (`HINDSIGHT_LLM_MODEL_<OPERATION>`, else
        `HINDSIGHT_LLM_MODEL`); `timeout` and `max_retries` replace the configured ones for a caller
        that sits inside other work (the judge in resolution, the summariser in a merge). Every call is
        given to `recorder` (the ledger)."""
        return cls(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key.get_secret_value(),
            model=settings.llm_model_for(operation),
            timeout=settings.llm_timeout_seconds if timeout is None else timeout,
            max_retries=settings.llm_max_retries if max_retries is None else max_retries,
            operation=operation,
            recorder=recorder,
        )

    @property
    def base_url(self) -> Any:
        return self._openai.base_url

    @property
    def timeout(self) -> Any:
        return self._openai.timeout

    @property
    def max_retries(self) -> int:
        return self._openai.max_retries

    async def aclose(self) -> None:
        await self._openai.close()

    async def ask(
        self,
        messages: list[ChatCompletionMessageParam],
        reply: Reply[T],
        usage: MutableMapping[str, int],
        *,
        model: str | None = None,
    ) -> T:
        """One logical question: the parsed reply, after at most one corrective retry. `model` replaces
        the client's for this question (a bank's own model for the operation). Raises openai's errors
        (after the SDK's transport retries; `EmptyReply` without choices), `InvalidReply` when the retry
        is invalid too, and the parser's ValueError when `reply.correction` is None."""
        model = model or self.model
        choice, result, error = await self._complete(messages, reply, usage, model)
        if error is None:
            return cast(T, result)
        if reply.correction is None:
            raise error
        correction = (
            f"Your reply was not valid: {describe_error(error)}\n"
            f"Reply again with {reply.correction} only, no prose, no code fences."
        )
        messages = [
            *messages,
            {"role": "assistant", "content": choice.message.content or ""},
            {"role": "user", "content": correction},
        ]
        _, result, second = await self._complete(messages, reply, usage, model)
        if second is not None:
            raise InvalidReply(describe_error(second)) from second
        return cast(T, result)

    async def _complete(
        self,
        messages: list[ChatCompletionMessageParam],
        reply: Reply[Any],
        usage: MutableMapping[str, int],
        model: str,
    ) -> tuple[Choice, Any, ValueError | None]:
        """One request (two when the server refuses json_schema), counted into `usage` and recorded
        with its outcome → (the choice, the parsed reply, None) or (the choice, None, why it is invalid)."""
        schema = reply.response_format() if self._json_schema_supported else None
        # Remembered only once JSON mode has worked (an exception leaves the flag as it was); a call that
        # asks for JSON mode only says nothing about json_schema.
        response, schema_worked, latency_ms = await self._create(messages, schema, model)
        if schema is not None:
            self._json_schema_supported = schema_worked
        choice = response.choices[0] if response.choices else None
        prompt, completion, estimated = _tokens(messages, response, choice)
        usage["calls"] = usage.get("calls", 0) + 1
        for key, n in zip(USAGE_KEYS, (prompt, completion, prompt + completion), strict=True):
            usage[key] = usage.get(key, 0) + n
        result: Any = None
        error: ValueError | None = None
        if choice is not None:
            try:
                result = _read(choice, reply)
            except ValueError as invalid:  # pydantic's ValidationError included
                error = invalid
        outcome: Outcome = "ok" if choice is not None and error is None else "invalid"
        await self._record(model, prompt, completion, estimated, latency_ms, outcome)
        if choice is None:
            raise EmptyReply("the response has no choices")
        return choice, result, error

    async def _create(
        self, messages: list[ChatCompletionMessageParam], json_schema: ResponseFormat | None, model: str
    ) -> tuple[ChatCompletion, bool, int]:
        """`json_schema` first when given, JSON mode if the server refuses it with a 400 (or when none
        is given). Returns the response, whether json_schema worked and the request's milliseconds."""
        if json_schema is not None:
            try:
                response, latency_ms = await self._send(messages, model, json_schema, refusable=True)
            except openai.BadRequestError:
                pass  # probably no json_schema support: JSON mode instead
            else:
                return response, True, latency_ms
        response, latency_ms = await self._send(messages, model, {"type": "json_object"})
        return response, False, latency_ms

    async def _send(
        self,
        messages: list[ChatCompletionMessageParam],
        model: str,
        response_format: ResponseFormat,
        *,
        refusable: bool = False,
    ) -> tuple[ChatCompletion, int]:
        """The request itself; one that fails is recorded here (`refused`: a 400 to a `refusable` one)."""
        started = time.perf_counter()
        try:
            response = await self._openai.chat.completions.create(
                model=model, messages=messages, response_format=response_format
            )
        except openai.OpenAIError as error:
            refused = refusable and isinstance(error, openai.BadRequestError)
            await self._record(model, 0, 0, False, _since(started), "refused" if refused else "error")
            raise
        return response, _since(started)

    async def _record(
        self, model: str, prompt: int, completion: int, estimated: bool, latency_ms: int, outcome: Outcome
    ) -> None:
        if self._recorder is None:
            return
        charge = current_charge()
        call = LLMCall(
            operation=self.operation,
            model=model,
            prompt_tokens=prompt,
            completion_tokens=completion,
            estimated=estimated,
            latency_ms=latency_ms,
            outcome=outcome,
            bank_id=charge.bank_id,
            job_id=charge.job_id,
        )
        await self._recorder.record(call)


def _since(started: float) -> int:
    return round((time.perf_counter() - started) * 1000)


def _tokens(
    messages: list[ChatCompletionMessageParam], response: ChatCompletion, choice: Choice | None
) -> tuple[int, int, bool]:
    """(prompt, completion, estimated): the response's `usage`, or estimates when it has none."""
    if response.usage is not None:
        return int(response.usage.prompt_tokens or 0), int(response.usage.completion_tokens or 0), False
    reply = choice.message.content or "" if choice is not None else ""
    return count_message_tokens(list(messages)), count_tokens(reply), True


def _read(choice: Choice, reply: Reply[T]) -> T:
    """The choice's text → fences stripped, JSON repaired → the caller's parser."""
    if choice.finish_reason == "length":
        raise ValueError(f"the output was cut off (finish_reason=length); {reply.cut_off_hint}")
    if choice.message.refusal:
        raise ValueError(f"the reply was a refusal: {choice.message.refusal}")
    return reply.parse(load_json_reply(choice.message.content or "", reply.expected))


def load_json_reply(text: str, expected: str) -> Any:
    """A model's JSON reply, code fences stripped and broken JSON repaired (not validated).

    `expected` describes the wanted shape for the error message; raises ValueError on an empty reply.
    """
    body = text.strip()
    if not body.startswith(("{", "[")):  # a bare JSON answer may itself hold ``` inside its strings
        match = _FENCE.search(body)
        body = (match.group(1) if match else body).strip()
    if not body:
        raise ValueError(f"the reply is empty; expected {expected}")
    return json_repair.loads(body)


def fenced_json(value: object) -> str:
    """JSON for inside a prompt's data fence: "</" is escaped (valid JSON) so data can never close the
    fence."""
    return json.dumps(value, ensure_ascii=False, indent=1).replace("</", "<\\/")


def describe_error(error: BaseException) -> str:
    """An error's text for a prompt or a log line, cut at MAX_ERROR_CHARS."""
    text = str(error)
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " ..."
