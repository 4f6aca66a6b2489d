"""The GPUStack 2.x HTTP API: the only package that knows URLs."""
