package runtimejava;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import java.util.HashMap;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import org.apache.kafka.clients.producer.RecordMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.RecordBatch;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.source.SourceTask;
import org.apache.kafka.connect.source.SourceTaskContext;
import org.apache.kafka.connect.source.TransactionContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/**
 * One Java source task. poll() answers a whole batch in one call (SourceBatch: keys and values in Kafka's
 * JsonConverter envelope, which the runtime's JsonConverter reads back into the same Connect data); the
 * runtime's converters then serialize it for Kafka.
 */
public final class SourceTaskHandle {
    private final String instance;
    private final SourceTask task;
    private final ClassLoader loader;
    private final Callbacks callbacks;
    private final JsonConverter envelopes = new JsonConverter();
    // polled and not yet acknowledged, by sequence number, for commitRecord(), when the task overrides it
    private final Map<Long, SourceRecord> unacknowledged = new HashMap<>();
    private long nextSequence;
    private final boolean wantsCommitRecord;

    public SourceTaskHandle(Host host, String connectorClass, String taskClass, String instance, Callbacks callbacks)
            throws Exception {
        this.instance = instance;
        this.callbacks = callbacks;
        this.loader = host.loader(connectorClass);
        this.task = (SourceTask) host.newInstance(connectorClass, taskClass);
        this.wantsCommitRecord = overridesCommitRecord(task.getClass());
        envelopes.configure(Collections.singletonMap("schemas.enable", "true"), false);
    }

    /** Whether a task class overrides commitRecord(): only then does the runtime hand back each record. */
    static boolean overridesCommitRecord(Class<?> taskClass) throws NoSuchMethodException {
        return taskClass.getMethod("commitRecord", SourceRecord.class, RecordMetadata.class).getDeclaringClass()
            != SourceTask.class;
    }

    public String version() throws Exception {
        return Loaders.with(loader, task::version);
    }

    public void start(String configJson) throws Exception {
        Map<String, String> config = Host.JSON.readValue(configJson, new TypeReference<Map<String, String>>() {});
        Loaders.run(loader, () -> {
            task.initialize(new Context(config));
            task.start(config);
        });
    }

    /** The next batch, encoded by SourceBatch (its first record's sequence number with it); null when
     * there is none. */
    public byte[] poll() throws Exception {
        List<SourceRecord> records = Loaders.with(loader, task::poll);
        if (records == null || records.isEmpty()) {
            return null;
        }
        byte[] batch = SourceBatch.encode(records, nextSequence, envelopes);
        if (wantsCommitRecord) {
            for (SourceRecord record : records) {
                unacknowledged.put(nextSequence++, record);
            }
        } else {
            nextSequence += records.size();
        }
        return batch;
    }

    /** commit(), once the runtime committed the offsets of what it acknowledged (the reference's order). */
    public void commit() throws Exception {
        Loaders.run(loader, task::commit);
    }

    /**
     * commitRecord() for records the runtime acknowledged (or dropped), in the order it did:
     * [[sequence, topic, partition, offset], ...], topic null for a record dropped (metadata null).
     */
    public void commitRecords(String acknowledgedJson) throws Exception {
        JsonNode rows = Host.JSON.readTree(acknowledgedJson);
        Loaders.run(loader, () -> {
            for (JsonNode row : rows) {
                SourceRecord record = unacknowledged.remove(row.get(0).asLong());
                if (record == null) {
                    continue;
                }
                RecordMetadata metadata = row.get(1).isNull() ? null
                    : new RecordMetadata(new TopicPartition(row.get(1).asText(), row.get(2).asInt()), row.get(3).asLong(),
                        0, RecordBatch.NO_TIMESTAMP, -1, -1);
                task.commitRecord(record, metadata);
            }
        });
    }

    public void stop() throws Exception {
        Loaders.run(loader, task::stop);
    }

    private class Context implements SourceTaskContext {
        private final Map<String, String> config;

        Context(Map<String, String> config) {
            this.config = config;
        }

        @Override
        public Map<String, String> configs() {
            return config;
        }

        @Override
        public OffsetStorageReader offsetStorageReader() {
            return new OffsetReader(instance, callbacks);
        }

        @Override
        public TransactionContext transactionContext() {
            return null;
        }
    }
}
