"""`gsg soak`, the pure part: prompts, statistics, metric normalisation, rounds and the verdict."""
