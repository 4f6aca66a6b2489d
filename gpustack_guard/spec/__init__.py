"""The spec document: GPUStack's deployment fields plus gsg's `guard:` block."""
