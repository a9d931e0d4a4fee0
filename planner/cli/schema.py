"""``planner schema``: print the JSON Schema of study YAML files."""

from __future__ import annotations

import argparse
import json

from .options import Subparsers, add_command

NAME = "schema"


def add(subparsers: Subparsers) -> None:
    """Declare ``planner schema``."""
    add_command(subparsers, NAME, "print the JSON Schema of study YAML files",
                """  planner schema > study.schema.json
  planner schema --json""",
                description="Print the JSON Schema (draft 2020-12) that study files are validated against, "
                            "for editors that complete and check YAML.")


def run(args: argparse.Namespace) -> int:
    """Run ``planner schema``."""
    from ..study import schema  # heavy (the study stack): loaded when the command runs

    print(json.dumps(schema(), indent=2))
    return 0
