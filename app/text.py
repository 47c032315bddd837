"""Language helpers shared by distillation and search: CJK detection, sentence splitting and
jieba segmentation (PostgreSQL's parser has no Chinese word breaker, so we give it the words)."""

from __future__ import annotations

import logging
import re
import threading
from functools import cache

_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
# A sentence ends at . ! ? ; (followed by space or end) or at their full-width forms or a newline.
_SENTENCE_END = re.compile(r"(?<=[.!?;])\s+|(?<=[。！？；])|\n+")
_init_lock = threading.Lock()


def has_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def split_sentences(text: str) -> list[str]:
    return [s.strip() for s in _SENTENCE_END.split(text) if s and s.strip()]


@cache
def _jieba() -> object:
    import jieba

    with _init_lock:
        jieba.setLogLevel(logging.WARNING)
        jieba.initialize()
    return jieba


def segment(text: str) -> list[str]:
    """Chinese words of `text` (search mode: long words also give their parts)."""
    import jieba

    _jieba()
    return [w for w in jieba.cut_for_search(text) if w.strip()]


def search_text(content: str) -> str:
    """What full-text search indexes: the content, plus its jieba words when it has Chinese."""
    if not has_cjk(content):
        return content
    return content + " " + " ".join(w for w in segment(content) if has_cjk(w))


def pos_tag(text: str) -> list[tuple[str, str]]:
    """(word, part of speech) pairs from jieba: nr person, ns place, nt organisation, nz other
    proper noun. Its person tags are noisy; callers filter them."""
    import jieba.posseg

    _jieba()
    return [(p.word, p.flag) for p in jieba.posseg.cut(text) if len(p.word) >= 2]
