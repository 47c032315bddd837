"""The evolution suite, measured: does the newest truth win? Every case of bench/suites/evolution/ is
run in a bank of its own, told as a conversation and written directly, then asked its question; the
report counts supersede recall (changes), false supersedes (near misses) and still-true halves lost
(partial updates), per half (dev / holdout) × language × mode.

    python -m bench.truth [--split dev|holdout|all] [--json out.json] [--show-failures]

On the holdout half only counts are printed, never a case's text.
"""
