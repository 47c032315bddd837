"""Evaluations of a running Hindsight service over its public HTTP API (`hindsight eval ...`)."""
