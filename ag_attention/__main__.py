"""``python -m ag_attention ...``: the ``ag-attention`` command."""

from ._cli import main

if __name__ == "__main__":
    raise SystemExit(main())
