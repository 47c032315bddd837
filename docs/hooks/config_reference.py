"""The configuration reference, generated from the code at every docs build (an MkDocs hook), so it cannot
drift: the environment settings from `app.config.Settings` (a field's meaning is its `description`, else
the comment on or right above its line in app/config.py) and the bank config from
`app.banks.config.BankConfig` (its JSON schema's descriptions, the same the OpenAPI document shows)."""

from __future__ import annotations

import ast
import io
import json
import tokenize
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel

ROOT = Path(__file__).resolve().parents[2]
CONFIG_SOURCE = ROOT / "app" / "config.py"
MARKER = "<!-- configuration-reference -->"
ENV_PREFIX = "HINDSIGHT_"


def _comments(source: str) -> dict[int, str]:
    """Each line's comment text (without `#`), by line number."""
    found: dict[int, str] = {}
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            found[token.start[0]] = token.string.lstrip("#").strip()
    return found


def source_comments(class_name: str = "Settings", source: str | None = None) -> dict[str, str]:
    """The comment of each field of `class_name`: the comment lines right above it, then the one on its
    own lines."""
    source = source if source is not None else CONFIG_SOURCE.read_text(encoding="utf-8")
    comments = _comments(source)
    lines = source.splitlines()
    tree = ast.parse(source)
    [cls] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == class_name]
    found: dict[str, str] = {}
    for node in cls.body:
        if not (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)):
            continue
        above: list[str] = []
        line = node.lineno - 1
        while line >= 1 and lines[line - 1].lstrip().startswith("#"):
            above.insert(0, comments[line])
            line -= 1
        end = node.end_lineno or node.lineno
        inline = [comments[n] for n in range(node.lineno, end + 1) if n in comments]
        found[node.target.id] = " ".join(above + inline).strip()
    return found


def _type_name(annotation: Any) -> str:
    """A field's type in a reader's words: `a` | `b` for choices, `int`, `float`, `str`, `list of str`."""
    origin = typing.get_origin(annotation)
    if origin is typing.Annotated:
        return _type_name(typing.get_args(annotation)[0])
    if origin is typing.Literal:
        return " \\| ".join(f"`{a}`" for a in typing.get_args(annotation))
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return " \\| ".join(_type_name(a) for a in args)
    if origin is list:
        return f"list of {_type_name(typing.get_args(annotation)[0])}"
    if origin is dict:
        key, value = typing.get_args(annotation)
        return f"map of {_type_name(key)} to {_type_name(value)}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return f"object ({', '.join(annotation.model_fields)})"
    if annotation.__name__ == "SecretStr":
        return "secret"
    return str(annotation.__name__)


def _bounds(metadata: list[Any]) -> str:
    signs = {"ge": "≥", "gt": ">", "le": "≤", "lt": "<"}
    parts = [
        f"{sign} {getattr(m, name)}"
        for m in metadata
        for name, sign in signs.items()
        if getattr(m, name, None) is not None
    ]
    return ", ".join(parts)


def _default(field: Any) -> str:
    value = field.get_default(call_default_factory=True)
    if value is None or (hasattr(value, "get_secret_value") and not value.get_secret_value()):
        return "–"
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, list | dict):
        return f"`{json.dumps(value)}`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def settings_rows() -> list[tuple[str, str, str, str]]:
    """(variable, default, type, meaning) of every environment setting, in the class's order."""
    from app.config import Settings

    comments = source_comments()
    rows = []
    for name, field in Settings.model_fields.items():
        meaning = field.description or comments.get(name, "")
        kind = _type_name(field.annotation)
        if bounds := _bounds(field.metadata):
            kind += f" ({bounds})"
        rows.append((f"`{ENV_PREFIX}{name.upper()}`", _default(field), kind, _cell(meaning)))
    return rows


def bank_config_rows() -> list[tuple[str, str, str, str]]:
    """(key, default, type, meaning) of every bank config key, from the same JSON schema as the API's."""
    from app.banks.config import BankConfig

    schema = BankConfig.model_json_schema()
    rows = []
    for name, field in BankConfig.model_fields.items():
        prop = schema["properties"][name]
        kind = _type_name(field.annotation)
        if bounds := _bounds(field.metadata):
            kind += f" ({bounds})"
        rows.append((f"`{name}`", _default(field), kind, _cell(prop.get("description", ""))))
    return rows


def _table(head: tuple[str, ...], rows: list[tuple[str, str, str, str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def render() -> str:
    """The two reference tables, as Markdown."""
    return "\n".join(
        [
            "### Environment settings",
            "",
            "Read from the environment at start (prefix `HINDSIGHT_`; generated from `app/config.py`).",
            "",
            _table(("variable", "default", "type", "meaning"), settings_rows()),
            "",
            "### Bank config",
            "",
            "Keys of a bank's `config` (`POST /v1/banks`; `PATCH /v1/banks/{bank_id}` merges into the "
            "current one; unknown keys are refused with 422; generated from `app/banks/config.py`).",
            "",
            _table(("key", "default", "type", "meaning"), bank_config_rows()),
            "",
        ]
    )


def on_page_markdown(markdown: str, **kwargs: Any) -> str:
    """MkDocs hook: the marker of the configuration page becomes the reference."""
    return markdown.replace(MARKER, render()) if MARKER in markdown else markdown
