"""gpustack-guard: GPUStack deployments as code, checked by memory arithmetic before they OOM."""

__version__ = "0.1.0"
