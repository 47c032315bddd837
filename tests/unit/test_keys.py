"""Composite keys are unambiguous: no two distinct id tuples share a key, whatever the ids hold."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from app.events.working_memory import working_memory_key
from app.keys import composite_key

# The characters an id may hold (SLUG_PATTERN), ':' and '.' over-represented: they are the trouble.
ids = st.text(alphabet=st.sampled_from("ab0:.-_:"), min_size=1, max_size=12)


@given(st.tuples(ids, ids), st.tuples(ids, ids))
def test_distinct_pairs_never_share_a_key(one: tuple[str, str], other: tuple[str, str]) -> None:
    if one != other:
        assert composite_key(*one) != composite_key(*other)
        assert working_memory_key(*one) != working_memory_key(*other)


@given(ids, ids, ids)
def test_moving_a_separator_between_the_ids_changes_the_key(a: str, b: str, c: str) -> None:
    # ("T", "eu:chat") and ("T:eu", "chat") — the same characters, the ':' in the other id.
    assert working_memory_key(a, f"{b}:{c}") != working_memory_key(f"{a}:{b}", c)
    assert composite_key("distill", a, f"{b}:{c}") != composite_key("distill", f"{a}:{b}", c)


@given(st.lists(ids, max_size=4), st.lists(ids, max_size=4))
def test_tuples_of_any_length_never_collide(one: list[str], other: list[str]) -> None:
    if one != other:
        assert composite_key(*one) != composite_key(*other)


def test_the_probe_s_pair_is_two_keys() -> None:
    assert working_memory_key("T", "eu:chat") != working_memory_key("T:eu", "chat")
    assert composite_key("distill", "T", "eu:chat") != composite_key("distill", "T:eu", "chat")
