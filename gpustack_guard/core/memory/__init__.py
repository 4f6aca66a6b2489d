"""Pure memory arithmetic: model facts, weight bytes, and per-engine per-GPU budgets. No I/O here."""
