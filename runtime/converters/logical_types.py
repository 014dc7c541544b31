"""Connect's logical types (Decimal, Date, Time, Timestamp) as every converter encodes them.

The JSON converter defined these first; the Schema Registry converters share its exact rules (a Decimal
must have its schema's scale; a naive datetime is UTC; Date/Time/Timestamp also accept encoded ints).
"""

from __future__ import annotations

from ..data.logical_schemas import (  # noqa: F401 - the converters' one import for logical types
    DATE_LOGICAL_NAME,
    DECIMAL_LOGICAL_NAME,
    DECIMAL_SCALE_PARAMETER,
    TIME_LOGICAL_NAME,
    TIMESTAMP_LOGICAL_NAME,
    decimal_schema,
)

# re-exported under public names
from .json import _decimal_scale as decimal_scale  # noqa: F401
from .json import _encode_date as date_to_days  # noqa: F401
from .json import _encode_time as time_to_millis  # noqa: F401
from .json import _encode_timestamp as timestamp_to_millis  # noqa: F401
from .json import decimal_from_bytes, decimal_to_bytes  # noqa: F401

LOGICAL_NAMES = (DECIMAL_LOGICAL_NAME, DATE_LOGICAL_NAME, TIME_LOGICAL_NAME, TIMESTAMP_LOGICAL_NAME)
