"""Moving a bank between deployments: an NDJSON export from one snapshot, an all-or-nothing import."""
