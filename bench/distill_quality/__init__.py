"""Distillation quality on the labelled suite (bench/suites/distill/): noise, atomic claims, clean text,
kinds, links, kept assistant and tool facts, per language, on the dev and holdout halves."""
