"""The one OpenAI-compatible JSON chat client, used by the LLM distiller, the conflict judge and the merge
summariser: any server that speaks `/v1/chat/completions` (OpenAI, vLLM, Ollama, …) through the `openai` SDK.

A call asks for JSON: structured output with the caller's JSON schema first, JSON mode when the server
refuses it with a 400 (remembered for the client's next calls, i.e. for that server). The reply's code
fences are stripped, broken JSON is repaired (`json_repair`), the caller's parser validates it (pydantic),
and an invalid reply gets one corrective retry that carries the validation error. Transport retries
(429 / 5xx / timeouts, with backoff and Retry-After) are the SDK's own. Token usage is counted per call.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, MutableMapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, TypeVar

import json_repair
import openai
from openai import AsyncOpenAI
from pydantic import BaseModel

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
        self, *, base_url: str | None, api_key: str, model: str, timeout: float = 60.0, max_retries: int = 3
    ) -> None:
        self.model = model
        self._openai = AsyncOpenAI(
            base_url=base_url, api_key=api_key or "unused", timeout=timeout, max_retries=max_retries
        )
        self._json_schema_supported = True  # set False once the server refuses json_schema with a 400

    @classmethod
    def from_settings(
        cls, settings: Settings, *, timeout: float | None = None, max_retries: int | None = None
    ) -> JSONChatClient:
        """The configured server and model; `timeout` and `max_retries` replace the configured ones
        for a caller that sits inside other work (the judge in resolution, the summariser in a merge)."""
        return cls(
            base_url=settings.llm_base_url,
            api_key=settings.llm_api_key.get_secret_value(),
            model=settings.llm_model,
            timeout=settings.llm_timeout_seconds if timeout is None else timeout,
            max_retries=settings.llm_max_retries if max_retries is None else max_retries,
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
        self, messages: list[ChatCompletionMessageParam], reply: Reply[T], usage: MutableMapping[str, int]
    ) -> T:
        """One logical question: the parsed reply, after at most one corrective retry. Raises openai's
        errors (after the SDK's transport retries; `EmptyReply` without choices), `InvalidReply` when
        the retry is invalid too, and the parser's ValueError when `reply.correction` is None."""
        choice = await self._complete(messages, reply, usage)
        try:
            return _read(choice, reply)
        except ValueError as error:  # pydantic's ValidationError included
            if reply.correction is None:
                raise
            correction = (
                f"Your reply was not valid: {describe_error(error)}\n"
                f"Reply again with {reply.correction} only, no prose, no code fences."
            )
            messages = [
                *messages,
                {"role": "assistant", "content": choice.message.content or ""},
                {"role": "user", "content": correction},
            ]
        retry = await self._complete(messages, reply, usage)
        try:
            return _read(retry, reply)
        except ValueError as second:
            raise InvalidReply(describe_error(second)) from second

    async def _complete(
        self, messages: list[ChatCompletionMessageParam], reply: Reply[Any], usage: MutableMapping[str, int]
    ) -> Choice:
        schema = reply.response_format() if self._json_schema_supported else None
        # Remembered only once JSON mode has worked (an exception leaves the flag as it was); a call that
        # asks for JSON mode only says nothing about json_schema.
        response, schema_worked = await self._create(messages, schema)
        if schema is not None:
            self._json_schema_supported = schema_worked
        add_usage(usage, response)
        if not response.choices:
            raise EmptyReply("the response has no choices")
        return response.choices[0]

    async def _create(
        self, messages: list[ChatCompletionMessageParam], json_schema: ResponseFormat | None
    ) -> tuple[ChatCompletion, bool]:
        """`json_schema` first when given, JSON mode if the server refuses it with a 400 (or when none
        is given). Returns the response and whether json_schema worked."""
        if json_schema is not None:
            try:
                response = await self._openai.chat.completions.create(
                    model=self.model, messages=messages, response_format=json_schema
                )
            except openai.BadRequestError:
                pass  # probably no json_schema support: JSON mode instead
            else:
                return response, True
        response = await self._openai.chat.completions.create(
            model=self.model, messages=messages, response_format={"type": "json_object"}
        )
        return response, False


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


def add_usage(usage: MutableMapping[str, int], response: ChatCompletion) -> None:
    """Count one call and its token usage into `usage` (a dict or a Counter)."""
    usage["calls"] = usage.get("calls", 0) + 1
    if response.usage is not None:
        for key in USAGE_KEYS:
            usage[key] = usage.get(key, 0) + int(getattr(response.usage, key, 0) or 0)


def fenced_json(value: object) -> str:
    """JSON for inside a prompt's data fence: "</" is escaped (valid JSON) so data can never close the
    fence."""
    return json.dumps(value, ensure_ascii=False, indent=1).replace("</", "<\\/")


def describe_error(error: BaseException) -> str:
    """An error's text for a prompt or a log line, cut at MAX_ERROR_CHARS."""
    text = str(error)
    return text if len(text) <= MAX_ERROR_CHARS else text[:MAX_ERROR_CHARS] + " ..."
