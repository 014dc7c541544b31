"""Where this runtime still differs from the reference, case by case (xfail, strict: a fix makes them fail
until they are taken off this list), and the cases whose exception texts are JVM artefacts."""
from __future__ import annotations

# case id prefix -> why it still differs
KNOWN_DIFFERENCES: dict[str, str] = {
    # Values.parseString is ported only for the unambiguous cases (converters/headers.py); the reference infers
    # int8..int64, float32 before float64, Decimal for big integers, Date/Time/Timestamp, typed arrays and maps.
    "insert-header-literal-6-": "99999999999999999999: reference Decimal(scale 0), ours string",
    "insert-header-literal-7-": "3.14: reference float32, ours float64",
    "insert-header-literal-11-": "null: reference a null header, ours the string",
    "insert-header-literal-14-": "[1,2,3]: reference array<int8>, ours schemaless",
    "insert-header-literal-15-": "[1,\"a\"]: reference array with null item schema, ours schemaless",
    "insert-header-literal-16-": "{...}: reference map<string,int8>, ours schemaless",
    "insert-header-literal-17-": "{...}: reference map<string,array<int8>>, ours schemaless",
    "insert-header-literal-18-": "[]: reference array with null item schema, ours schemaless",
    "insert-header-literal-19-": "{}: reference's JsonConverter fails on its own map schema (NPE), ours schemaless",
    "insert-header-literal-20-": "a date: reference Date logical type, ours string",
    "insert-header-literal-21-": "a time: reference Time logical type, ours string",
    "insert-header-literal-22-": "a timestamp: reference Timestamp logical type, ours string",
    "insert-header-literal-27-": "1.0: reference int8, ours float",
    "insert-header-literal-28-": "0.1: reference float32, ours float64",
    "insert-header-literal-34-": "[true,false]: reference array<boolean>, ours schemaless",
    "insert-header-literal-35-": "nested map: reference map<string,map>, ours schemaless",
    "insert-header-literal-36-": "[1.5,2]: reference array<float32>, ours schemaless",
    "insert-header-literal-37-": "{1:2}: reference map<int8,int8>, ours string",
    "insert-header-literal-38-": "[\"x\",null]: reference string, ours schemaless",
    "insert-header-literal-39-": "123456789012.5: reference float32, ours float64",
    # The reference's JsonConverter rejects a struct schema with a default (its own SchemaBuilder check);
    # ours reads it
    "flatten-optional-struct-with-default": "the reference cannot read struct defaults from JSON; we can",
    "tsc-field-struct-with-default": "the reference cannot read struct defaults from JSON; we can",
    # The reference throws NullPointerException; this runtime a DataException that says what is wrong
    "tsc-error-string-without-format": "reference NPE on a string input without `format`; ours DataException",
    "tsc-error-schemaless-string-without-format": "reference NPE on a string input without `format`; ours "
                                                  "DataException",
    "header-from-copy-missing-field": "reference NPE for a field the schema lacks; ours DataException",
    "header-from-move-missing-field": "reference NPE for a field the schema lacks; ours DataException",
}

# Cases whose exception messages are JVM artefacts (identity hashes, Java toString of records, java.util.regex
# texts): the exception class is compared, not the message.
MESSAGE_NOT_COMPARED: dict[str, str] = {
    "insert-config-static-without-value": "prints InsertionSpec@<identity hash>",
    "tsr-error-null-timestamp": "prints the record's Java toString",
    "regex-router-config-bad-regex": "java.util.regex's PatternSyntaxException text",
    "predicate-topic-config-invalid": "java.util.regex's PatternSyntaxException text",
}
