"""The documentation holds together: the configuration reference (generated at every docs build by the
MkDocs hook) lists every setting and bank config key with its meaning, the README stays a front door whose
links lead to files of the repository, and the site's navigation lists every page."""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path
from types import ModuleType

import yaml

from app.banks.config import BankConfig
from app.config import Settings

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"


def _hook() -> ModuleType:
    spec = importlib.util.spec_from_file_location("config_reference", DOCS / "hooks" / "config_reference.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _rows(markdown: str) -> dict[str, list[str]]:
    """The reference's table rows by their first cell (`HINDSIGHT_X` or a bank config key)."""
    rows = {}
    for line in markdown.splitlines():
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line)[1:-1]]
        if cells and cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    return rows


def test_every_setting_and_bank_config_key_is_in_the_reference_with_its_meaning() -> None:
    rows = _rows(_hook().render())
    settings = [f"HINDSIGHT_{name.upper()}" for name in Settings.model_fields]
    keys = list(BankConfig.model_fields)
    assert settings
    assert keys
    for name in settings + keys:
        assert name in rows, f"{name} is not in the configuration reference"
        meaning = rows[name][3]
        assert len(meaning) > 10, f"{name} has no meaning: a comment on or above its line, or a description"


def test_the_reference_reads_a_fields_comment_from_the_source() -> None:
    source = """
class Settings:
    # What it is,
    # on two lines
    first: int = 1
    second: str = "x"  # said beside it
    third: bool = False
"""
    found = _hook().source_comments("Settings", source)
    assert found == {"first": "What it is, on two lines", "second": "said beside it", "third": ""}


def test_the_configuration_page_carries_the_marker_the_hook_replaces() -> None:
    hook = _hook()
    page = (DOCS / "guides" / "configuration.md").read_text(encoding="utf-8")
    assert page.count(hook.MARKER) == 1
    built = hook.on_page_markdown(page)
    assert hook.MARKER not in built
    assert "`HINDSIGHT_DATABASE_URL`" in built
    assert "`distill_every_n_turns`" in built


def test_the_site_runs_the_hook_and_its_navigation_lists_every_page() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    assert config["hooks"] == ["docs/hooks/config_reference.py"]
    assert config["strict"] is True

    def pages(nav: list[object]) -> list[str]:
        found: list[str] = []
        for item in nav:
            value = next(iter(item.values())) if isinstance(item, dict) else item
            found += pages(value) if isinstance(value, list) else [str(value)]
        return found

    listed = set(pages(config["nav"]))
    on_disk = {str(p.relative_to(DOCS)) for p in DOCS.rglob("*.md")}
    assert on_disk - listed == set(), "pages missing from the nav of mkdocs.yml"
    assert listed - on_disk == set(), "nav entries without a page"


def _relative_links(path: Path) -> list[str]:
    text = re.sub(r"```.*?```", "", path.read_text(encoding="utf-8"), flags=re.S)
    links = re.findall(r"\]\(([^)\s]+)\)", text)
    return [link for link in links if not re.match(r"[a-z]+:", link) and not link.startswith("#")]


def test_the_readme_is_a_front_door_whose_links_lead_somewhere() -> None:
    readme = ROOT / "README.md"
    assert len(readme.read_text(encoding="utf-8").splitlines()) <= 250
    for page in (readme, ROOT / "CONTRIBUTING.md"):
        links = _relative_links(page)
        assert links, page
        missing = [link for link in links if not (page.parent / link.split("#")[0]).exists()]
        assert missing == [], f"{page.name} links to files that do not exist: {missing}"
