"""Maintenance's numeric tuning, each value with why it is what it is (the bank's own limits, such as
`max_forget_share`, are its config)."""

from __future__ import annotations

from datetime import timedelta

# Units per transaction of a lifecycle step: the bank's lock is held for one batch at a time.
LIFECYCLE_BATCH = 500
# ...and of a re-embedding step, smaller: each unit is embedded again inside the transaction.
REEMBED_BATCH = 256
# Rows the sweep reads per kind (idle sessions, overdue jobs, unsent messages): the rest wait a minute.
SWEEP_BATCH = 500
# An L2 unit confirmed by this many sources is settled knowledge (L3): said again and again.
PROMOTE_SOURCES = 3
# ...or one this sure and this important: a firm statement that matters, said once.
PROMOTE_CONFIDENCE = 0.9
PROMOTE_IMPORTANCE = 0.7
# A run that would archive more than the bank's `max_forget_share` of its active units (and at least
# this many) archives nothing unless an admin forces it (`params.force`): a wrong clock or rule must
# not erase a bank. Small banks are left to their rules.
GUARD_MIN_UNITS = 20
# The weekly merge's cosine: stricter than resolution's `SIMILAR`, as nothing new arrived to compare.
MERGE_SIMILARITY = 0.90
# Neighbours a unit is compared with in the weekly merge: a cluster of restatements is small.
MERGE_NEIGHBOURS = 10
# A job sent this long ago and still queued lost its message: the sweep sends it again.
RESEND_AFTER = timedelta(seconds=60)
# A job whose send failed (the broker was down) is resent at the next sweep. The grace covers a send
# still in flight (bounded by TaskQueue's timeout); a send that lands anyway only duplicates a message.
RESEND_UNSENT_AFTER = timedelta(seconds=5)
# A bank with units pending this long gets a resolution job: its own one was lost.
PENDING_AFTER_SECONDS = 60
# A session quiet for longer than this is not looked at for an ended task (sessions from before task
# episodes existed are left alone instead of all being distilled again at once).
TASK_END_HORIZON = 86400
