"""No evaluation data in the product: the examples in app/ (comments, docstrings, prompts, patterns,
strings alike) are invented, never sentences quoted from the evaluation suites (the YAML files under
bench/suites and tests, and the LoCoMo data in ../shared/data/locomo when it is checked out beside the
repository). A double-quoted text of 10 to 120 characters with at least 5 Latin words or 8 CJK
characters that occurs in a suite fails the test; shorter, generic phrases do not count."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

from app.seeds import BUDGET_CONVERSATION

ROOT = Path(__file__).resolve().parents[2]
APP = ROOT / "app"
SUITE_DIRS = (ROOT / "bench" / "suites", ROOT / "tests")
LOCOMO = ROOT.parent / "shared" / "data" / "locomo"

# Every text between two double quotes on one line, overlapping, so that a triple-quoted docstring's
# opening quotes cannot hide the first example after them.
QUOTED = re.compile(r'(?="([^"\n]{10,120})")')
LATIN_WORD = re.compile(r"[a-z0-9']+")
CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff]")
MIN_LATIN_WORDS = 5
MIN_CJK = 8

# The seeds' conversation is the product's own running example (README quickstart, OpenAPI examples):
# the suites quote it, not the other way round, so its turns in app/seeds.py are no evaluation data.
SEED_TURNS = {text.lower() for turns in BUDGET_CONVERSATION.values() for _, text in turns}


def suite_text() -> str:
    files = [f for d in SUITE_DIRS for pattern in ("*.yaml", "*.yml") for f in d.rglob(pattern)]
    if LOCOMO.is_dir():
        files += LOCOMO.rglob("*.json")
    return "\n".join(f.read_text(encoding="utf-8").lower() for f in sorted(files))


def says_enough(text: str) -> bool:
    return len(LATIN_WORD.findall(text)) >= MIN_LATIN_WORDS or len(CJK.findall(text)) >= MIN_CJK


def quoted(path: Path) -> Iterator[tuple[int, str]]:
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        for match in QUOTED.finditer(line):
            yield number, match.group(1)


def hits(path: Path, suites: str) -> list[str]:
    found = []
    for number, text in quoted(path):
        lowered = text.lower()
        if not says_enough(lowered) or lowered not in suites:
            continue
        if path == APP / "seeds.py" and lowered in SEED_TURNS:
            continue
        found.append(f"{path.relative_to(ROOT)}:{number}: {text}")
    return found


def test_the_scan_counts_words_and_characters() -> None:
    assert says_enough("the plumber comes every second thursday")
    assert not says_enough("see you next time")
    assert says_enough("周末我们打算去山里露营")
    assert not says_enough("周末去露营")
    assert [t for _, t in quoted(Path(__file__))] != []


def test_no_suite_sentence_is_quoted_in_the_product() -> None:
    suites = suite_text()
    assert len(suites) > 10_000, "no suite files found"
    found = [hit for path in sorted(APP.rglob("*.py")) for hit in hits(path, suites)]
    assert not found, "evaluation data quoted in app/ (invent an example instead):\n" + "\n".join(found)


def test_this_file_quotes_no_suite_sentence() -> None:
    assert hits(Path(__file__), suite_text()) == []
