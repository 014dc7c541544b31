package runtimejava;

import com.fasterxml.jackson.core.JsonGenerator;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import org.apache.kafka.connect.data.Schema;
import org.apache.kafka.connect.data.SchemaBuilder;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;

/**
 * A polled batch as the runtime reads it (runtime/java/source_batch.py), in columns: records are grouped
 * into runs of consecutive records sharing topic, partition, key and value schemas and source partition,
 * and each run's keys and values cross as one JsonConverter envelope of an array of that schema. The
 * runtime's JsonConverter then decodes a whole column in one call (the same conversions, element by
 * element, as one envelope per record), and a batch of one run with no keys or headers reaches the
 * producer without a Python object per record.
 *
 * Newline-separated JSON documents (Jackson escapes newlines inside strings):
 *   {"first": sequence of the first record, "runs": [{"n", "topic", "partition", "sourcePartition",
 *     "offsets": [...], "timestamps": [...], "headers": null | [null | [[name, envelope text], ...]]}]}
 *   then per run: its keys' envelope (or null: no key schema, every key null), its values' envelope.
 */
final class SourceBatch {
    private static final byte NEWLINE = '\n';

    private SourceBatch() {}

    static byte[] encode(List<SourceRecord> records, long first, JsonConverter envelopes) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream(Math.max(1024, records.size() * 128));
        List<byte[]> columns = new ArrayList<>();
        try (JsonGenerator meta = Host.JSON.getFactory().createGenerator(out)) {
            meta.writeStartObject();
            meta.writeNumberField("first", first);
            meta.writeArrayFieldStart("runs");
            int start = 0;
            for (int i = 1; i <= records.size(); i++) {
                if (i == records.size() || !sameRun(records.get(start), records.get(i))) {
                    writeRun(meta, records.subList(start, i), envelopes, columns);
                    start = i;
                }
            }
            meta.writeEndArray();
            meta.writeEndObject();
        }
        for (byte[] column : columns) {
            out.write(NEWLINE);
            out.write(column);
        }
        return out.toByteArray();
    }

    private static boolean sameRun(SourceRecord a, SourceRecord b) {
        return a.keySchema() == b.keySchema()
            && a.valueSchema() == b.valueSchema()
            && Objects.equals(a.topic(), b.topic())
            && Objects.equals(a.kafkaPartition(), b.kafkaPartition())
            && Objects.equals(a.sourcePartition(), b.sourcePartition());
    }

    private static void writeRun(JsonGenerator meta, List<SourceRecord> run, JsonConverter envelopes, List<byte[]> columns)
            throws IOException {
        SourceRecord head = run.get(0);
        String topic = head.topic();
        meta.writeStartObject();
        meta.writeNumberField("n", run.size());
        meta.writeStringField("topic", topic);
        meta.writeObjectField("partition", head.kafkaPartition());
        meta.writeObjectField("sourcePartition", head.sourcePartition());
        meta.writeArrayFieldStart("offsets");
        for (SourceRecord record : run) {
            meta.writeObject(record.sourceOffset());
        }
        meta.writeEndArray();
        meta.writeArrayFieldStart("timestamps");
        for (SourceRecord record : run) {
            meta.writeObject(record.timestamp());
        }
        meta.writeEndArray();
        writeHeaders(meta, run, envelopes);
        meta.writeEndObject();

        List<Object> keys = new ArrayList<>(run.size());
        List<Object> values = new ArrayList<>(run.size());
        boolean anyKey = false;
        for (SourceRecord record : run) {
            keys.add(record.key());
            values.add(record.value());
            anyKey |= record.key() != null;
        }
        columns.add(head.keySchema() == null && !anyKey ? "null".getBytes(StandardCharsets.UTF_8) : column(topic, head.keySchema(), keys, envelopes));
        columns.add(column(topic, head.valueSchema(), values, envelopes));
    }

    /** One envelope for a column: an array of the records' schema (schemaless: an array of schemaless values). */
    private static byte[] column(String topic, Schema schema, List<Object> values, JsonConverter envelopes) {
        Schema array = schema == null ? null : SchemaBuilder.array(schema).build();
        return envelopes.fromConnectData(topic, array, values);
    }

    private static void writeHeaders(JsonGenerator meta, List<SourceRecord> run, JsonConverter envelopes) throws IOException {
        boolean any = false;
        for (SourceRecord record : run) {
            any |= record.headers() != null && !record.headers().isEmpty();
        }
        if (!any) {
            meta.writeNullField("headers");
            return;
        }
        meta.writeArrayFieldStart("headers");
        for (SourceRecord record : run) {
            if (record.headers() == null || record.headers().isEmpty()) {
                meta.writeNull();
                continue;
            }
            meta.writeStartArray();
            for (Header header : record.headers()) {
                meta.writeStartArray();
                meta.writeString(header.key());
                byte[] envelope = envelopes.fromConnectData(record.topic(), header.schema(), header.value());
                if (envelope == null) {
                    meta.writeNull();
                } else {
                    meta.writeString(new String(envelope, StandardCharsets.UTF_8));
                }
                meta.writeEndArray();
            }
            meta.writeEndArray();
        }
        meta.writeEndArray();
    }
}
