package runtimejava;

import java.nio.charset.StandardCharsets;
import java.util.Collections;
import org.apache.kafka.connect.json.JsonConverter;

/**
 * JSON read and written as Kafka Connect reads and writes source partitions and offsets (a schemaless
 * JsonConverter): integers come back as Long, as a task reading its offsets from the reference gets them.
 */
final class Schemaless {
    private static final ThreadLocal<JsonConverter> CONVERTER = ThreadLocal.withInitial(() -> {
        JsonConverter converter = new JsonConverter();
        converter.configure(Collections.singletonMap("schemas.enable", "false"), false);
        return converter;
    });

    private Schemaless() {}

    static Object read(String json) {
        return CONVERTER.get().toConnectData("", json.getBytes(StandardCharsets.UTF_8)).value();
    }

    static String write(Object value) {
        byte[] bytes = CONVERTER.get().fromConnectData("", null, value);
        return bytes == null ? "null" : new String(bytes, StandardCharsets.UTF_8);
    }
}
