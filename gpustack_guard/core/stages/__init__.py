"""The pipeline stages after check and render, each a pure fold returning immutable results:

placed (core/stages/placement.py: cluster, GPUs and GPUStack's bookings, in apply order) ->
estimated (core/stages/estimation.py: the engine arithmetic per replica, real footprints per GPU).
The rules in core/rules/ read only these results (core/stages/results.py).
"""
