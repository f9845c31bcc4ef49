"""The manual names the whole public surface, and only names that exist (issue 47, items 3 and 5).

docs/manual/api.md is the API by example: every name of ``ag_attention.__all__`` appears on it.  The pages of the
manual and of the mathematics (docs/manual/*.md, docs/math/*.md) name only functions, methods and modules of the
package that exist: a renamed or removed name fails here, not in a reader's session.
"""

from __future__ import annotations

import re
from pathlib import Path

import ag_attention

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
API_MANUAL = DOCS / "manual" / "api.md"


def test_every_public_name_is_in_the_api_manual() -> None:
    text = API_MANUAL.read_text()
    missing = [
        name for name in ag_attention.__all__ if not re.search(rf"(?:(?<![\w.])|(?<=ag_attention\.)){name}\b", text)
    ]
    assert not missing, f"docs/manual/api.md does not name {missing} of ag_attention.__all__"
