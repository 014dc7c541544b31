package runtimejava;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.sink.SinkTask;
import org.apache.kafka.connect.sink.SinkTaskContext;

/**
 * One Java sink task. put() takes a whole batch as one JSON document, each key, value and header in Kafka's
 * JsonConverter envelope, written by the runtime's JsonConverter from the Connect data its converters read.
 * What the task asks of its context (offsets to rewind to, a timeout, a commit, pauses) is collected and
 * handed back after each call, for the runtime to apply to its consumer.
 */
public final class SinkTaskHandle {
    private final SinkTask task;
    private final ClassLoader loader;
    private final JsonConverter envelopes = new JsonConverter();
    private final Context context = new Context();

    public SinkTaskHandle(Host host, String connectorClass, String taskClass) throws Exception {
        this.loader = host.loader(connectorClass);
        this.task = (SinkTask) host.newInstance(connectorClass, taskClass);
        envelopes.configure(Collections.singletonMap("schemas.enable", "true"), false);
    }

    public String version() throws Exception {
        return Loaders.with(loader, task::version);
    }

    public String start(String configJson) throws Exception {
        Map<String, String> config = Host.JSON.readValue(configJson, new TypeReference<Map<String, String>>() {});
        context.config = config;
        Loaders.run(loader, () -> {
            task.initialize(context);
            task.start(config);
        });
        return context.drain();
    }

    /** [[topic, partition, offset, timestamp, timestampType, key, value, headers], ...]. */
    public String put(byte[] batch) throws Exception {
        JsonNode rows = Host.JSON.readTree(batch);
        List<SinkRecord> records = new ArrayList<>(rows.size());
        for (JsonNode row : rows) {
            String topic = row.get(0).asText();
            SchemaAndValue key = read(topic, row.get(5));
            SchemaAndValue value = read(topic, row.get(6));
            ConnectHeaders headers = new ConnectHeaders();
            JsonNode headerRows = row.get(7);
            if (headerRows != null && !headerRows.isNull()) {
                for (JsonNode header : headerRows) {
                    SchemaAndValue h = read(topic, header.get(1));
                    headers.add(header.get(0).asText(), h.value(), h.schema());
                }
            }
            JsonNode timestamp = row.get(3);
            records.add(new SinkRecord(topic, row.get(1).asInt(), key.schema(), key.value(), value.schema(), value.value(),
                row.get(2).asLong(), timestamp.isNull() ? null : timestamp.asLong(),
                TimestampType.forName(row.get(4).asText()), headers));
        }
        Loaders.run(loader, () -> task.put(records));
        return context.drain();
    }

    private SchemaAndValue read(String topic, JsonNode envelope) {
        if (envelope == null || envelope.isNull()) {
            return SchemaAndValue.NULL;
        }
        return envelopes.toConnectData(topic, envelope.asText().getBytes(StandardCharsets.UTF_8));
    }

    /** preCommit([[topic, partition, offset], ...]): the offsets safe to commit, same form. */
    public String preCommit(String offsetsJson) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> current = new HashMap<>();
        for (List<Object> row : rows(offsetsJson)) {
            current.put(partition(row), new OffsetAndMetadata(((Number) row.get(2)).longValue()));
        }
        Map<TopicPartition, OffsetAndMetadata> safe = Loaders.with(loader, () -> task.preCommit(current));
        ArrayNode out = Host.JSON.createArrayNode();
        if (safe != null) {
            safe.forEach((tp, offset) -> out.addArray().add(tp.topic()).add(tp.partition()).add(offset.offset()));
        }
        ObjectNode answer = Host.JSON.createObjectNode();
        answer.set("offsets", out);
        answer.set("context", Host.JSON.readTree(context.drain()));
        return Host.JSON.writeValueAsString(answer);
    }

    public String open(String partitionsJson) throws Exception {
        List<TopicPartition> partitions = partitions(partitionsJson);
        context.assignment.addAll(partitions);
        Loaders.run(loader, () -> task.open(partitions));
        return context.drain();
    }

    public String close(String partitionsJson) throws Exception {
        List<TopicPartition> partitions = partitions(partitionsJson);
        Loaders.run(loader, () -> task.close(partitions));
        partitions.forEach(context.assignment::remove);
        return context.drain();
    }

    public void stop() throws Exception {
        Loaders.run(loader, task::stop);
    }

    private static List<List<Object>> rows(String json) throws Exception {
        return Host.JSON.readValue(json, new TypeReference<List<List<Object>>>() {});
    }

    private static TopicPartition partition(List<Object> row) {
        return new TopicPartition((String) row.get(0), ((Number) row.get(1)).intValue());
    }

    private static List<TopicPartition> partitions(String json) throws Exception {
        List<TopicPartition> out = new ArrayList<>();
        for (List<Object> row : rows(json)) {
            out.add(partition(row));
        }
        return out;
    }

    /** What the task asked of its context since the last call, for the runtime's consumer. */
    private static final class Context implements SinkTaskContext {
        Map<String, String> config = Collections.emptyMap();
        final Set<TopicPartition> assignment = Collections.synchronizedSet(new LinkedHashSet<>());
        private final Map<TopicPartition, Long> offsets = new HashMap<>();
        private final Set<TopicPartition> paused = new LinkedHashSet<>();
        private final Set<TopicPartition> resumed = new LinkedHashSet<>();
        private Long timeoutMs;
        private boolean commitRequested;

        @Override
        public Map<String, String> configs() {
            return config;
        }

        @Override
        public synchronized void offset(Map<TopicPartition, Long> offsets) {
            this.offsets.putAll(offsets);
        }

        @Override
        public synchronized void offset(TopicPartition tp, long offset) {
            offsets.put(tp, offset);
        }

        @Override
        public synchronized void timeout(long timeoutMs) {
            this.timeoutMs = timeoutMs;
        }

        @Override
        public Set<TopicPartition> assignment() {
            return new LinkedHashSet<>(assignment);
        }

        @Override
        public synchronized void pause(TopicPartition... partitions) {
            paused.addAll(Arrays.asList(partitions));
            Arrays.asList(partitions).forEach(resumed::remove);
        }

        @Override
        public synchronized void resume(TopicPartition... partitions) {
            resumed.addAll(Arrays.asList(partitions));
            Arrays.asList(partitions).forEach(paused::remove);
        }

        @Override
        public synchronized void requestCommit() {
            commitRequested = true;
        }

        /** {"offsets": [[t, p, o]], "timeout": ms|null, "commit": bool, "pause": [[t, p]], "resume": [[t, p]]}. */
        synchronized String drain() throws Exception {
            ObjectNode out = Host.JSON.createObjectNode();
            ArrayNode o = out.putArray("offsets");
            offsets.forEach((tp, offset) -> o.addArray().add(tp.topic()).add(tp.partition()).add(offset));
            if (timeoutMs == null) {
                out.putNull("timeout");
            } else {
                out.put("timeout", timeoutMs);
            }
            out.put("commit", commitRequested);
            ArrayNode p = out.putArray("pause");
            paused.forEach(tp -> p.addArray().add(tp.topic()).add(tp.partition()));
            ArrayNode r = out.putArray("resume");
            resumed.forEach(tp -> r.addArray().add(tp.topic()).add(tp.partition()));
            offsets.clear();
            paused.clear();
            resumed.clear();
            timeoutMs = null;
            commitRequested = false;
            return Host.JSON.writeValueAsString(out);
        }
    }
}
