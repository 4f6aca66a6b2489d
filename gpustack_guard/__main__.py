from gpustack_guard.cli import main

raise SystemExit(main())
