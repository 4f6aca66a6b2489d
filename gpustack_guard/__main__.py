from gpustack_guard.cli import entry

entry()
