"""Relations by structure: the closed verb table in English and Chinese, whole product names and
versions, first person as the speaker, and descriptions left out."""

from __future__ import annotations

import pytest

from app.distill.heuristic.entities import find_entities
from app.distill.heuristic.relations import extract_relations, find_products


def triples(text: str, speaker: str = "The user") -> set[tuple[str, str, str]]:
    return {(r.subject, r.relation, r.object) for r in extract_relations(text, speaker)[1]}


def types(text: str, speaker: str = "The user") -> dict[str, str]:
    return {e.name: e.type for e in extract_relations(text, speaker)[0]}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Priya works at Northwind Traders.", ("Priya", "works_at", "Northwind Traders")),
        ("Orion Labs runs on MySQL 8.0.", ("Orion Labs", "uses", "MySQL 8.0")),
        ("Gustavo uses QuillPad every day.", ("Gustavo", "uses", "QuillPad")),
        ("Elif owns a Tesla Model 3.", ("Elif", "owns", "Tesla Model 3")),
        ("Marek lives in Porto.", ("Marek", "lives_in", "Porto")),
        ("Dana belongs to Fjord Analytics.", ("Dana", "belongs_to", "Fjord Analytics")),
        ("Lena manages the Billing Service team.", ("Lena", "manages", "Billing Service")),
        ("Maria reports to Tom Baker.", ("Maria", "reports_to", "Tom Baker")),
        ("The ledger depends on Postgres 16.", None),  # a lower-case subject is a description
        ("Pinecone Cart depends on Postgres 16.", ("Pinecone Cart", "depends_on", "Postgres 16")),
        ("We switched to LoomDesk last spring.", ("The user", "uses", "LoomDesk")),
        ("Our team relies on GitLab.", ("The user", "uses", "GitLab")),
    ],
)
def test_english_verbs(text: str, expected: tuple[str, str, str] | None) -> None:
    found = triples(text)
    if expected is None:
        assert found == set()
    else:
        assert expected in found


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("赵敏在云帆科技工作", ("赵敏", "works_at", "云帆科技")),
        ("云帆科技用的是NimbusDB 5", ("云帆科技", "uses", "NimbusDB 5")),
        ("我们公司用的是MySQL 8.0。", ("用户", "uses", "MySQL 8.0")),
        ("张伟属于星河数据公司", ("张伟", "belongs_to", "星河数据公司")),
        ("李娜负责订单系统", ("李娜", "manages", "订单系统")),
        ("订单系统依赖Redis 7", ("订单系统", "depends_on", "Redis 7")),
        ("小明向刘芳汇报", ("小明", "reports_to", "刘芳")),
        ("我住在杭州", ("用户", "lives_in", "杭州")),
        ("支付服务有严重的性能问题", ("支付服务", "has_issue", "严重的性能问题")),
        ("青松科技现在在用Postgres 16", ("青松科技", "uses", "Postgres 16")),
    ],
)
def test_chinese_verbs(text: str, expected: tuple[str, str, str]) -> None:
    assert expected in triples(text, "用户")


def test_a_bug_is_a_relation_of_its_product_not_a_hub_shared_by_every_product() -> None:
    english = triples("QuillPad 2.1 has a known bug: saving hangs on big files.")
    assert english == {("QuillPad 2.1", "has_issue", "QuillPad 2.1 known bug")}
    chinese = triples("NimbusDB有个已知bug，备份会失败", "用户")
    assert chinese == {("NimbusDB", "has_issue", "NimbusDB的已知bug")}
    specific = triples("The Atlas API has a memory leak when retries pile up.")
    assert specific == {("Atlas API", "has_issue", "memory leak when retries pile up")}
    assert types("QuillPad 2.1 has a known bug.")["QuillPad 2.1"] == "product"


def test_names_and_versions_are_whole_and_typed() -> None:
    assert find_products("We moved from QuillPad to NimbusDB 5 and Python 3.12.") == [
        "QuillPad",
        "NimbusDB 5",
        "Python 3.12",
    ]
    assert find_products("On May 5 Priya met Tom.") == []
    english = {e.name: e.type for e in find_entities("Gustavo said QuillPad crashed again.", "en", [])}
    assert english.get("QuillPad") == "product"
    assert "Quill" not in english  # never cut at the inner capital
    chinese = {e.name for e in find_entities("我们在用MySQL 8.0", "zh", [])}
    assert "MySQL 8.0" in chinese
    assert types("Orion Labs runs on MySQL 8.0.") == {"MySQL 8.0": "product", "Orion Labs": "organization"}
    assert types("Priya works at Northwind Traders.")["Northwind Traders"] == "organization"


def test_lists_of_objects_end_where_the_next_clause_starts() -> None:
    found = triples("Orion Labs depends on Postgres 16 and Redis, and Jin owns a Tesla Model 3.")
    assert found == {
        ("Orion Labs", "depends_on", "Postgres 16"),
        ("Orion Labs", "depends_on", "Redis"),
        ("Jin", "owns", "Tesla Model 3"),
    }


def test_no_relation_without_a_named_object_or_subject() -> None:
    assert triples("I use email for everything.") == set()
    assert triples("The kids use Minecraft a lot.") == set()
    assert triples("It has some issues.") == set()
    assert triples("我喜欢用手机", "用户") == set()
