"""Recorded runs: cassettes, and the models and tools that replay them. Published by
`reactloop.testing`.

What other packages may use is imported here; the rest is private to the package."""

from reactloop._cassettes._cassette import Cassette
from reactloop._cassettes._models import RecordingModel, ReplayModel

__all__ = [
    "Cassette",
    "RecordingModel",
    "ReplayModel",
]
