"""Maintenance scripts of the jitgrad repository (run from its root as ``python -m tools.X``)."""
