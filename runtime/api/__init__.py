"""The plugin API: what connector authors import. No runtime internals live here."""
from .config import (
    HIDDEN, NO_DEFAULT, AbstractConfig, ConfigDef, ConfigKey, ConfigValue, Importance, NonEmptyString, NonNull,
    Password, Range, Type, ValidList, ValidRegex, ValidString, Width,
)
from .connector import (
    Connector, ConnectorContext, SinkConnector, SinkConnectorContext, SourceConnector, SourceConnectorContext,
)
from .data import Field, Schema, SchemaBuilder
from .errors import (
    AlreadyExistsError, ConfigError, ConnectError, DataError, NotFoundError, RetriableError,
    UnsupportedOperationError,
)
from .records import (
    ConnectRecord, Header, RecordMetadata, SinkRecord, SinkRecordBatch, SourceRecord, SourceRecordBatch, TopicPartition,
)
from .task import (
    ErrantRecordReporter, OffsetStorageReader, SinkTask, SinkTaskContext, SourceTask, SourceTaskContext, Task, TaskContext,
)

__all__ = [
    "HIDDEN", "NO_DEFAULT", "AbstractConfig", "ConfigDef", "ConfigKey", "ConfigValue", "Importance", "NonEmptyString",
    "NonNull", "Password", "Range", "Type", "ValidList", "ValidRegex", "ValidString", "Width",
    "Connector", "ConnectorContext", "SinkConnector", "SinkConnectorContext", "SourceConnector", "SourceConnectorContext",
    "Field", "Schema", "SchemaBuilder",
    "AlreadyExistsError", "ConfigError", "ConnectError", "DataError", "NotFoundError", "RetriableError",
    "UnsupportedOperationError",
    "ConnectRecord", "Header", "RecordMetadata", "SinkRecord", "SinkRecordBatch", "SourceRecord", "SourceRecordBatch",
    "TopicPartition",
    "ErrantRecordReporter", "OffsetStorageReader", "SinkTask", "SinkTaskContext", "SourceTask", "SourceTaskContext", "Task", "TaskContext",
]
