"""What the LLM calls cost: the ledger every call is recorded in, the daily budgets of a bank and of the
service, and the usage reports (docs/guides/llm-cost.md)."""
