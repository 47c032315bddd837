"""A budget said after the thing it is for, in the turn's next clause or sentence ("I'm replacing my phone.
My budget is $900."): the budget's unit names the thing ("The user's budget for the phone is $900."), so that
a budget for another thing, said later, is never read as a new value of this one (issue 31)."""

from __future__ import annotations

import re

from app.claims import extract
from app.claims.values import free
from app.distill.types import Candidate
from app.text import has_cjk, pos_words

# a budget naming no thing of its own: "The user's budget is …", 用户说预算是…
_BARE_BUDGET_EN = re.compile(r"\b(?:the user's|their|my|our|the)\s+budget\b(?!\s+(?:for|of|on)\b)", re.I)
_BARE_BUDGET_ZH = re.compile(r"^(?:用户说)?(?:用户的|我的|我们的)?预算")
# the thing a free value ends on: its verb's object, a noun phrase after a determiner ("buy *a laptop*")
_OBJECT_EN = re.compile(
    r"^\w+.*?\b(?:a|an|the|my|our|their|his|her|some)\s+((?:[\w-]+\s+){0,2}[\w-]+)$", re.IGNORECASE
)
# ...in Chinese, the noun phrase a verb of getting or doing takes (买台笔记本电脑), not a choice (要石头的)
_VERB_OF_A_THING_ZH = re.compile(r"买|换|装修|翻新|租|订|找|配")


def _thing(unit: Candidate) -> str:
    """What the unit's last claim is about when its value is a thing (a noun phrase), else ""."""
    claims = extract(unit.content)
    if not claims or claims[-1].head or not free(claims[-1].value):
        return ""
    value = claims[-1].value.text.strip(" .,。，")
    if has_cjk(value):
        words = pos_words(value)
        acted = _VERB_OF_A_THING_ZH.search(claims[-1].text.replace(value, " ")) is not None
        return value if acted and words and all(flag.startswith("n") for _, flag in words) else ""
    found = _OBJECT_EN.search(value)
    return found.group(1) if found else ""


def budgets_with_their_thing(units: list[Candidate]) -> list[Candidate]:
    """The turn's units, a budget that names no thing narrowed by the thing of the unit before it."""
    out = list(units)
    for i in range(1, len(out)):
        unit = out[i]
        if "constraint.budget" not in unit.tags:
            continue
        zh = has_cjk(unit.content)
        bare = (_BARE_BUDGET_ZH if zh else _BARE_BUDGET_EN).search(unit.content)
        thing = _thing(out[i - 1]) if bare is not None else ""
        if bare is None or not thing:
            continue
        said = unit.content[: bare.end()]
        named = f"{said[:-2]}{thing}的预算" if zh else f"{said} for the {thing}"
        out[i] = unit.model_copy(update={"content": named + unit.content[bare.end() :]})
    return out
