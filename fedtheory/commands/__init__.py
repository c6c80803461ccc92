"""Subcommands of the ``fedtheory`` CLI (auto-discovered by :mod:`fedtheory.cli`)."""
