import gc

gc.disable()  # before the heavy imports too; see gpustack_guard.cli.main

from gpustack_guard.cli import main  # noqa: E402

raise SystemExit(main())
