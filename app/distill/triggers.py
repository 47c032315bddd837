"""Moved: job scheduling lives in `app.jobs.schedule`. Only `bench/distill.py` still imports the task
name from here; new code imports `app.jobs.schedule`."""

from app.jobs.schedule import DISTILL as DISTILL
