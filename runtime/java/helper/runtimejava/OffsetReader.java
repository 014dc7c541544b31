package runtimejava;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.connect.errors.ConnectException;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/** Committed source offsets, read from the runtime's offset store through the Python side. */
final class OffsetReader implements OffsetStorageReader {
    private final String instance;
    private final Callbacks callbacks;

    OffsetReader(String instance, Callbacks callbacks) {
        this.instance = instance;
        this.callbacks = callbacks;
    }

    @Override
    public <T> Map<String, Object> offset(Map<String, T> partition) {
        return offsets(Collections.singletonList(partition)).get(partition);
    }

    @Override
    public <T> Map<Map<String, T>, Map<String, Object>> offsets(Collection<Map<String, T>> partitions) {
        try {
            String answer = callbacks.offsets(instance, Schemaless.write(new ArrayList<>(partitions)));
            @SuppressWarnings("unchecked")
            List<List<Map<String, Object>>> pairs = (List<List<Map<String, Object>>>) Schemaless.read(answer);
            Map<Map<String, T>, Map<String, Object>> out = new HashMap<>();
            int i = 0;
            for (Map<String, T> partition : partitions) {
                out.put(partition, pairs.get(i++).get(1));
            }
            return out;
        } catch (ConnectException error) {
            throw error;
        } catch (Exception error) {
            throw new ConnectException("Failed to read offsets of " + instance + " from the runtime's offset store", error);
        }
    }
}
