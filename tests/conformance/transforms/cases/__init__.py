"""Every SMT conformance case, grouped by transform family (each module adds to one `Cases`)."""

from __future__ import annotations

from ..records import Cases
from . import fields, headers_routing, structure, time

_cases = Cases()
for _module in (fields, structure, time, headers_routing):
    _module.add(_cases)

ALL_CASES = _cases.items
