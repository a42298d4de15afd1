"""Runnable examples that train real models with jitgrad (``python -m jitgrad.examples.digits``)."""
