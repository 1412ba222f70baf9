"""Benchmarks: reactloop against a hand-written anyio loop doing the same work (`make bench`)."""
