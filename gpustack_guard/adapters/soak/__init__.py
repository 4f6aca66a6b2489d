"""`gsg soak`, the I/O: the streamed load driver, the metrics scraper and the round loop."""
