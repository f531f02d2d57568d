"""`python -m perf`: see `perf.cli`."""

from perf.cli import main

raise SystemExit(main())
