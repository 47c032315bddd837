"""Hindsight: agent memory as a service."""
