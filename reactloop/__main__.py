"""`python -m reactloop`: the command line (`reactloop` once installed)."""

from __future__ import annotations

from reactloop._cli import main

if __name__ == "__main__":
    main()
