"""Retrieval's numeric tuning, each value with why it is what it is."""

from __future__ import annotations

from app.banks.config import NEVER_DECAY

# Reciprocal rank fusion's k: lower than the usual 60, so a channel's first ranks stand further ahead of
# its tail; at 60 units found low by several channels outranked the semantic and keyword channels' best
# (figures in docs/benchmarks.md, "Retrieval").
RRF_K = 20
# Channel weights per fusion mode: in `rrf` the question's meaning and words find the answer (entities,
# time and tags mostly add candidates); `weighted` scores are on [0, 1], so they are shares.
DEFAULT_WEIGHTS: dict[str, dict[str, float]] = {
    "rrf": {"semantic": 1.0, "keyword": 1.0, "entity": 0.2, "temporal": 0.1, "tag": 0.3, "recency": 0.0},
    "weighted": {"semantic": 0.5, "keyword": 0.0, "entity": 0.0, "temporal": 0.2, "tag": 0.3, "recency": 0.0},
}
# How fast a unit's weight fades, per tag (then per kind): a constraint or correction holds for
# months, a taste or a happening for a year.
HALF_LIFE_DAYS: dict[str, float | None] = {
    # A step still to do matters until it is done (its TTL and the maintenance end it), not by its age:
    # plans said weeks ahead were halved in a day.
    "task_state": None,
    "constraint": 180.0,
    "correction": 180.0,
    "preference": 365.0,
    "episode": 365.0,
    **dict.fromkeys(NEVER_DECAY, None),  # facts do not fade, here nor in the decay task
    # A life event is never forgotten (no TTL, no decay task), but in an answer a recent one comes
    # before an old one, as episodes do: most specific tag first.
    "fact.event": 365.0,
}
# A tag or kind without a half-life of its own fades as a preference does.
DEFAULT_HALF_LIFE_DAYS = 365.0
# Decay never takes more than half a unit's score: an old unit that fits beats a new one that barely does.
DECAY_FLOOR = 0.5
# The `recency` weight's half-life: a month, the span "what did we do lately" asks about.
RECENCY_HALF_LIFE_DAYS = 30.0
# A semantic-layer (L3) unit sums up many turns: a little ahead of a single turn's unit of the same score.
SEMANTIC_LAYER_BOOST = 1.15
# A task episode the tag channel found (the query asks how a task was handled: "how did we …", "上次怎么
# 处理") comes before the single facts of that task's turns: the question is about the whole task.
TASK_QUESTION_BOOST = 1.5
# A unit whose source turns better units already cover keeps this share of its score: it still ranks,
# below units that bring new turns.
REDUNDANT_FACTOR = 0.4
# Name-like spans of a question tried against the bank's entities: the longest first, enough for any question.
MAX_NAME_CANDIDATES = 60
# The whole question's vector beside the one without the bank's subjects: the subject names every unit,
# so it counts half.
SUBJECT_WEIGHT = 0.5
# Reads buffered while the database is away; past this the oldest are dropped: they are statistics.
MAX_BUFFERED_READS = 10_000

# --- the channels' statement (app/db/repositories/channels.py) -------------------------------------------
# Hits per channel: enough for fusion to find agreement between channels, few enough for one round trip.
CHANNEL_LIMIT = 50
# A time window of at most this many units (said in it) is a set the channels are driven by; a larger
# one is a condition on each row their own indexes find (see `channels._where`).
SMALL_WINDOW_UNITS = 2000
# How many years back a year-less month or date ("in June") looks for one the bank holds memories of:
# one count each, only while the windows are empty.
YEARLESS_YEARS = 10
# The semantic channel's candidates in a larger window (see `channels._semantic`).
WINDOW_CANDIDATES = 500
# An entity named in more units than this says little about any one of them (the bank's own user,
# the two people of a conversation): the entity channel leaves it out unless the request names it.
COMMON_ENTITY_MENTIONS = 50
# The entity channel's walk over relations keeps this many neighbours per hop (the most recently
# related): a hub (the bank's user relates to everything it said) cannot pull in the whole bank.
HOP_NEIGHBOURS = 20
# A word in more units than this (in a large bank: "want", "order") costs more to rank than it tells;
# the keyword channel leaves it out.
COMMON_WORD_UNITS = 1000
# Counting a word's or a name's units is a bitmap scan each, so each API process remembers the answer
# per (bank, word) this long: a bank's vocabulary changes slowly.
VOCABULARY_TTL_SECONDS = 600
VOCABULARY_CACHE_SIZE = 100_000
