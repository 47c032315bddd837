"""Token counting for `max_tokens`: the WordPiece tokenizer of all-MiniLM-L6-v2 (shipped with the
package), one tokenizer for every bank and model. LLM tokenizers differ by a few percent."""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def _tokenizer() -> Any:
    from tokenizers import Tokenizer

    from app.providers.local_model import TOKENIZER

    tokenizer = Tokenizer.from_file(str(TOKENIZER))
    tokenizer.no_padding()
    tokenizer.no_truncation()
    return tokenizer


def count_tokens(text: str) -> int:
    return len(_tokenizer().encode(text, add_special_tokens=False).ids)
