"""The one error of the evaluation."""

from __future__ import annotations


class EvalError(Exception):
    """The evaluation cannot go on: bad data, a refused key, a failed job, a timeout."""
