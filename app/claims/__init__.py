"""Claims: what a statement asserts (subject, attribute, typed value, modality), and whether a newer one
ends an older one. Pure functions: no I/O, no database, no model."""

from app.claims.compare import Verdict, conflicts, names_old, same_attribute
from app.claims.ending import retired_object
from app.claims.extract import extract
from app.claims.frames import mask, overlap, tokens
from app.claims.model import Claim, Modality, Value
from app.claims.values import compatible, find_values, same

__all__ = [
    "Claim",
    "Modality",
    "Value",
    "Verdict",
    "compatible",
    "conflicts",
    "extract",
    "find_values",
    "mask",
    "names_old",
    "overlap",
    "retired_object",
    "same",
    "same_attribute",
    "tokens",
]
