from __future__ import annotations

from runner.cli import main

raise SystemExit(main())
