"""Filter: drop every record; meant to be used with a predicate."""

from __future__ import annotations

from ..api.config import ConfigDef
from ..api.records import ConnectRecord
from ..api.transforms import Transformation

OVERVIEW_DOC = (
    "Drops all records, filtering them from subsequent transformations in the chain. This is intended to be "
    "used conditionally to filter out records matching (or not matching) a particular Predicate."
)


class Filter(Transformation):
    __doc__ = OVERVIEW_DOC

    def apply(self, record: ConnectRecord) -> None:
        return None

    def config(self) -> ConfigDef:
        return ConfigDef()
