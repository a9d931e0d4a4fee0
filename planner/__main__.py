"""``python -m planner``: the same as the ``planner`` command."""

from .cli import main

raise SystemExit(main())
