"""gsg verify, pure half: an engine's start-up log read into observed terms, and held against the estimate."""
