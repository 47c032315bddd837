"""Resolution's numeric tuning, each value with why it is what it is (the bank's own thresholds, such as
`dedupe_threshold`, are its config)."""

from __future__ import annotations

# Units per transaction: the bank's lock is held for one batch at a time, so writes wait at most one batch.
BATCH = 100
# A resolution waits this long for the bank's lock before a 503 with `Retry-After`: longer than a batch takes.
LOCK_WAIT_SECONDS = 10.0
# Active neighbours a pending unit is compared with: a value has few rivals, and ten covers a chain's kin.
NEIGHBOURS = 10
# Below this similarity two units are unrelated; between it and `dedupe_threshold` a judge may decide.
SIMILAR = 0.80
# A merged unit's confidence never reaches certainty: a later correction can still replace it.
MAX_CONFIDENCE = 0.99
# Same tag, different values, and at least this close: an update of the same subject, not another one.
SAME_SUBJECT_SIMILARITY = 0.6
# A unit this much less confident than the old one only adds, never replaces: a hedge is not a correction.
CONDITIONAL_MARGIN = 0.1
# An episode this close to the old unit restates its value (a one-clause value, short since issue 32).
RESTATING_SIMILARITY = 0.45
# Neighbours searched for restatements: a value is said again a handful of times, rarely more.
RESTATING_NEIGHBOURS = 20
# A judge's reason kept in history: a sentence or two, not the model's whole reply.
MAX_REASON_CHARS = 500
# A judge's call waits at most this long, whatever the LLM timeout: resolution holds the bank's lock.
JUDGE_TIMEOUT_CAP_SECONDS = 30.0
# ...and retries at most this often: a judge that fails replaces nothing, so long retries only hold the lock.
JUDGE_MAX_RETRIES = 2
# A request that resolves its own unit (`?wait=true`, an acceptance) answers within ~10 s (the contract):
# its judge is asked for this long at most, then fails open.
REQUEST_JUDGE_SECONDS = 8.0
# Content words beside a verbless clause's value that still make it a detail of the clause before it ("£85
# a month" after a storage unit): a retirement of the one ends the other.
DETAIL_WORDS = 1
