package runtimejava;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * JSON read and written as Kafka Connect reads and writes source partitions and offsets (a schemaless
 * JsonConverter): integers come back as Long, as a task reading its offsets from the reference gets them.
 */
final class Schemaless {
    // one for the JVM (JsonConverter's conversions are thread-safe; its schema cache is synchronized)
    private static final JsonConverter CONVERTER = new JsonConverter();

    static {
        CONVERTER.configure(Collections.singletonMap("schemas.enable", "false"), false);
    }

    private Schemaless() {}

    static Object read(String json) {
        return CONVERTER.toConnectData("", json.getBytes(StandardCharsets.UTF_8)).value();
    }

    static String write(Object value) {
        byte[] bytes = CONVERTER.fromConnectData("", null, value);
        return bytes == null ? "null" : new String(bytes, StandardCharsets.UTF_8);
    }
}
