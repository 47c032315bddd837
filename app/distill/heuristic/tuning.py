"""The heuristic distiller's numeric tuning, each value with why it is what it is (the rules' own
confidences sit in their tables: `rules_en.py`, `rules_zh.py`, `parts.KIND_RULES`)."""

from __future__ import annotations

# A hedge ("if", "maybe", "如果…的话", "可能") lowers a claim's confidence: 0.9 becomes 0.675, still above
# the 0.6 a claim needs to be kept.
HEDGE_FACTOR = 0.75
# A correction matters more than what it corrects: it is the value to trust from now on.
CORRECTION_IMPORTANCE_BONUS = 0.1
# Confidence and importance of a verbatim turn: sure of what was said, of little weight on its own.
KIND_DEFAULTS = {"episode": (0.8, 0.3)}
# An assistant's turn is less sure and weighs less than the user's: it says what it did, not who the user is.
ASSISTANT_EPISODE = (0.7, 0.2)
# A longer turn becomes several episode units of about the same length, cut at sentence ends: a unit of a
# few sentences is about one thing, and ten still fit a prompt (English set by retrieval recall,
# docs/benchmarks.md; Chinese has no retrieval benchmark to set it by).
EPISODE_MAX_CHARS = {"en": 250, "zh": 600}
# A turn that states claims (a request, a few facts about oneself) is short; a longer one tells a story,
# whose clauses lean on each other: its plain statements stay one episode, a sentence cut only when each
# of its clauses is a claim. Short: at most this many sentences, clauses in a sentence (between people; said
# to an assistant a short turn's sentence is cut into all its claims), and words (English) or characters
# (Chinese) in the turn.
MAX_SPLIT_SENTENCES = 3
MAX_SPLIT_CLAUSES = 3
MAX_SPLIT_WORDS = {"en": 40, "zh": 80}
# The other speaker's question an answer's episode quotes (and cites): a question, not a paragraph.
QUOTE_MAX_CHARS = 200
# Fewer content words than this (without a number, name or date) says nothing worth a unit.
MIN_CONTENT_WORDS_EN = 3
# ...and fewer characters than this once filler is taken out, in Chinese (a word is one to three).
MIN_CONTENT_CHARS_ZH = 4
# This share of an assistant sentence's content words said by the user: an echo, not a claim of its own.
ECHO_OVERLAP = 0.5
# The other speakers' last turns an echo may restate: an echo answers what was just said.
ECHO_WINDOW = 3
# The speaker's turns after a slot was discussed in which a bare value still fills it ("budget?" … "5000"):
# one or two ordinary turns (and their replies) between leave the slot open.
SLOT_WINDOW = 3
# Characters either side of a capitalised word read to tell a person from an organisation: a few words.
ENTITY_CONTEXT_CHARS = 40
# A tool's record read field by field: at most this many fields, of at most this many words each (a longer
# result is prose or a listing, read as any other turn)
MAX_RECORD_FIELDS = 8
MAX_FIELD_WORDS = 16
