"""English stems are read in several request threads at once (the API reads a direct write's claims in a
worker thread): each thread stems with a Snowball stemmer of its own, which keeps the word it works on in
its fields. A shared one garbled stems or raised IndexError under concurrent writes."""

from __future__ import annotations

import itertools
import sys
from concurrent.futures import ThreadPoolExecutor

import snowballstemmer

from app.claims.frames import stem

WORDS = [
    "".join(letters) + suffix
    for letters in itertools.islice(itertools.product("abcdefghij", repeat=5), 1000)
    for suffix in ("ing", "ations", "fulness", "ies")
]


def test_stems_are_the_same_whatever_threads_read_them() -> None:
    expected = [snowballstemmer.stemmer("english").stemWord(w) for w in WORDS]
    uncached = stem.__wrapped__  # the stemmer itself, not the cache in front of it
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # hand the interpreter to another thread as often as it can
    try:
        with ThreadPoolExecutor(max_workers=8) as pool:
            runs = [pool.submit(lambda: [uncached(w) for w in WORDS]) for _ in range(8)]
            results = [run.result() for run in runs]
    finally:
        sys.setswitchinterval(switch)
    assert all(result == expected for result in results)
