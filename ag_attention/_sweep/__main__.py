"""``python -m ag_attention._sweep GRID.toml --out DIR [...]``: the ``ag-attention sweep`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
