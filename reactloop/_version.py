"""The package version: the single source (pyproject.toml reads it through hatchling)."""

__version__ = "0.1.0"
