// Runs SMT conformance cases through the reference's own classes (Apache Kafka Connect 3.9).
//
// stdin: one case per line (JSON), see tests/conformance/transforms/cases.py for the shape.
// args[0]: a file to write one result line per case to, the same shape smt_runner.py produces for this runtime
// (not stdout: the reference's classes log there).
// Records go in and out through the reference's JsonConverter, so the output is its bytes.
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.FileOutputStream;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.reflect.Constructor;
import java.lang.reflect.InvocationTargetException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.record.TimestampType;
import org.apache.kafka.connect.connector.ConnectRecord;
import org.apache.kafka.connect.data.SchemaAndValue;
import org.apache.kafka.connect.header.ConnectHeaders;
import org.apache.kafka.connect.header.Header;
import org.apache.kafka.connect.json.JsonConverter;
import org.apache.kafka.connect.runtime.TransformationStage;
import org.apache.kafka.connect.sink.SinkRecord;
import org.apache.kafka.connect.source.SourceRecord;
import org.apache.kafka.connect.transforms.Transformation;
import org.apache.kafka.connect.transforms.predicates.Predicate;

public final class SmtHarness {
    private static final ObjectMapper MAPPER = new ObjectMapper();

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        PrintStream out = new PrintStream(new FileOutputStream(args[0]), false, StandardCharsets.UTF_8);
        String line;
        while ((line = in.readLine()) != null) {
            if (line.isBlank()) continue;
            out.println(MAPPER.writeValueAsString(runCase(MAPPER.readTree(line))));
        }
        out.close();
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static ObjectNode runCase(JsonNode c) throws Exception {
        ObjectNode result = MAPPER.createObjectNode();
        result.put("id", c.get("id").asText());
        boolean schemas = c.get("schemas").asBoolean();
        Codec codec = new Codec(schemas);
        List<TransformationStage> stages;
        try {
            stages = stages(c.get("config"));
        } catch (Throwable e) {
            result.set("configure_error", error(e));
            return result;
        }
        ArrayNode outputs = result.putArray("results");
        for (JsonNode r : c.get("records")) {
            ObjectNode one = outputs.addObject();
            ConnectRecord record;
            try {
                record = codec.record(c.get("kind").asText(), r);
            } catch (Throwable e) {
                one.set("input_error", error(e));
                continue;
            }
            try {
                for (TransformationStage stage : stages) {
                    record = stage.apply(record);
                    if (record == null) break;
                }
            } catch (Throwable e) {
                one.set("error", error(e));
                continue;
            }
            if (record == null) {
                one.put("dropped", true);
                continue;
            }
            try {
                one.set("record", codec.render(record));
            } catch (Throwable e) {
                one.set("output_error", error(e));
            }
        }
        for (TransformationStage stage : stages) stage.close();
        return result;
    }

    private static ObjectNode error(Throwable e) {
        ObjectNode node = MAPPER.createObjectNode();
        node.put("class", e.getClass().getSimpleName());
        node.put("message", e.getMessage());
        return node;
    }

    // What ConnectorConfig.transformationStages() does, minus its ConnectException wrapper (the plugin's own
    // exception is what is compared), building the reference's TransformationStage (package-private).
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static List<TransformationStage> stages(JsonNode config) throws Exception {
        Map<String, String> props = new HashMap<>();
        config.fields().forEachRemaining(e -> props.put(e.getKey(), e.getValue().asText()));
        List<TransformationStage> stages = new ArrayList<>();
        Constructor<TransformationStage> make = TransformationStage.class.getDeclaredConstructor(
                Predicate.class, boolean.class, Transformation.class);
        make.setAccessible(true);
        String aliases = props.getOrDefault("transforms", "");
        for (String alias : aliases.split(",")) {
            alias = alias.trim();
            if (alias.isEmpty()) continue;
            String prefix = "transforms." + alias + ".";
            Transformation transformation = (Transformation) newInstance(props.get(prefix + "type"));
            Map<String, Object> configs = withPrefix(props, prefix);
            Object predicateAlias = configs.remove("predicate");
            Object negate = configs.remove("negate");
            transformation.configure(configs);
            Predicate predicate = null;
            if (predicateAlias != null) {
                String predicatePrefix = "predicates." + predicateAlias + ".";
                predicate = (Predicate) newInstance(props.get(predicatePrefix + "type"));
                predicate.configure(withPrefix(props, predicatePrefix));
            }
            boolean negated = negate != null && Boolean.parseBoolean(negate.toString());
            try {
                stages.add(make.newInstance(predicate, negated, transformation));
            } catch (InvocationTargetException e) {
                throw (Exception) e.getCause();
            }
        }
        return stages;
    }

    private static Object newInstance(String className) throws Exception {
        return Class.forName(className.trim()).getDeclaredConstructor().newInstance();
    }

    private static Map<String, Object> withPrefix(Map<String, String> props, String prefix) {
        Map<String, Object> out = new HashMap<>();
        props.forEach((k, v) -> {
            if (k.startsWith(prefix)) out.put(k.substring(prefix.length()), v);
        });
        return out;
    }

    // Record in (JSON -> the reference's JsonConverter -> Connect data) and out (Connect data -> JSON text).
    private static final class Codec {
        final boolean schemas;
        final JsonConverter keys = new JsonConverter();
        final JsonConverter values = new JsonConverter();
        final JsonConverter enveloped = new JsonConverter();  // headers, and schemas when records are schemaless

        Codec(boolean schemas) {
            this.schemas = schemas;
            keys.configure(Map.of("schemas.enable", String.valueOf(schemas)), true);
            values.configure(Map.of("schemas.enable", String.valueOf(schemas)), false);
            enveloped.configure(Map.of("schemas.enable", "true"), false);
        }

        ConnectRecord record(String kind, JsonNode r) throws Exception {
            String topic = r.get("topic").asText();
            Integer partition = r.hasNonNull("partition") ? r.get("partition").asInt() : null;
            Long timestamp = r.hasNonNull("timestamp") ? r.get("timestamp").asLong() : null;
            SchemaAndValue key = convert(keys, topic, r.get("key"));
            SchemaAndValue value = convert(values, topic, r.get("value"));
            ConnectHeaders headers = new ConnectHeaders();
            JsonNode hs = r.get("headers");
            if (hs != null) {
                for (JsonNode h : hs) headers.add(h.get(0).asText(), convert(enveloped, topic, h.get(1)));
            }
            if (kind.equals("source")) {
                return new SourceRecord(Map.of("p", 1), Map.of("o", 1), topic, partition, key.schema(), key.value(),
                        value.schema(), value.value(), timestamp, headers);
            }
            long offset = r.hasNonNull("offset") ? r.get("offset").asLong() : 0L;
            return new SinkRecord(topic, partition == null ? 0 : partition, key.schema(), key.value(), value.schema(),
                    value.value(), offset, timestamp, TimestampType.CREATE_TIME, headers);
        }

        private static SchemaAndValue convert(JsonConverter converter, String topic, JsonNode node) throws Exception {
            if (node == null || node.isNull()) return converter.toConnectData(topic, null);
            return converter.toConnectData(topic, MAPPER.writeValueAsBytes(node));
        }

        ObjectNode render(ConnectRecord record) {
            ObjectNode node = MAPPER.createObjectNode();
            node.put("topic", record.topic());
            if (record.kafkaPartition() == null) node.putNull("partition");
            else node.put("partition", record.kafkaPartition());
            if (record.timestamp() == null) node.putNull("timestamp");
            else node.put("timestamp", record.timestamp());
            node.put("key", text(keys.fromConnectData(record.topic(), record.keySchema(), record.key())));
            node.put("value", text(values.fromConnectData(record.topic(), record.valueSchema(), record.value())));
            if (!schemas) {
                node.put("key_schema", schemaText(record.topic(), record.keySchema()));
                node.put("value_schema", schemaText(record.topic(), record.valueSchema()));
            }
            ArrayNode headers = node.putArray("headers");
            for (Iterator<Header> it = record.headers().iterator(); it.hasNext(); ) {
                Header h = it.next();
                ArrayNode pair = headers.addArray();
                pair.add(h.key());
                pair.add(text(enveloped.fromConnectData(record.topic(), h.schema(), h.value())));
            }
            return node;
        }

        private String schemaText(String topic, org.apache.kafka.connect.data.Schema schema) {
            if (schema == null) return null;
            try {
                return MAPPER.writeValueAsString(enveloped.asJsonSchema(schema));
            } catch (Exception e) {
                return "unserializable schema: " + e;
            }
        }

        private static String text(byte[] bytes) {
            return bytes == null ? null : new String(bytes, StandardCharsets.UTF_8);
        }
    }
}
