package runtimejava;

import com.fasterxml.jackson.core.type.TypeReference;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.connect.connector.Connector;
import org.apache.kafka.connect.sink.SinkConnector;
import org.apache.kafka.connect.sink.SinkConnectorContext;
import org.apache.kafka.connect.source.ConnectorTransactionBoundaries;
import org.apache.kafka.connect.source.ExactlyOnceSupport;
import org.apache.kafka.connect.source.SourceConnector;
import org.apache.kafka.connect.source.SourceConnectorContext;
import org.apache.kafka.connect.storage.OffsetStorageReader;

/** One Java connector instance: its lifecycle calls, with configs and results as JSON. */
public final class ConnectorHandle {
    private final String instance;
    private final Connector connector;
    private final ClassLoader loader;
    private final Callbacks callbacks;

    public ConnectorHandle(Host host, String className, String instance, Callbacks callbacks) throws Exception {
        this.instance = instance;
        this.callbacks = callbacks;
        this.loader = host.loader(className);
        this.connector = (Connector) host.newInstance(className);
    }

    public String version() throws Exception {
        return Loaders.with(loader, connector::version);
    }

    public void initialize() throws Exception {
        Loaders.run(loader, () -> {
            if (connector instanceof SinkConnector) {
                connector.initialize(new SinkContext());
            } else {
                connector.initialize(new SourceContext());
            }
        });
    }

    public void start(String configJson) throws Exception {
        Map<String, String> config = Host.JSON.readValue(configJson, new TypeReference<Map<String, String>>() {});
        Loaders.run(loader, () -> connector.start(config));
    }

    public String taskClass() throws Exception {
        return Loaders.with(loader, () -> connector.taskClass().getName());
    }

    /** taskConfigs(maxTasks) as a JSON array (null entries kept: the runtime reports them as the reference). */
    public String taskConfigs(int maxTasks) throws Exception {
        return Loaders.with(loader, () -> Host.JSON.writeValueAsString(connector.taskConfigs(maxTasks)));
    }

    public void stop() throws Exception {
        Loaders.run(loader, connector::stop);
    }

    /** "SUPPORTED", "UNSUPPORTED" or null. */
    public String exactlyOnceSupport(String configJson) throws Exception {
        Map<String, String> config = Host.JSON.readValue(configJson, new TypeReference<Map<String, String>>() {});
        return Loaders.with(loader, () -> {
            ExactlyOnceSupport support = ((SourceConnector) connector).exactlyOnceSupport(config);
            return support == null ? null : support.name();
        });
    }

    /** "SUPPORTED" or "UNSUPPORTED" (KIP-618's connector-defined transaction boundaries). */
    public String canDefineTransactionBoundaries(String configJson) throws Exception {
        Map<String, String> config = Host.JSON.readValue(configJson, new TypeReference<Map<String, String>>() {});
        return Loaders.with(loader, () -> {
            ConnectorTransactionBoundaries answer = ((SourceConnector) connector).canDefineTransactionBoundaries(config);
            return answer == null ? null : answer.name();
        });
    }

    /** KIP-875: [[partition, offset or null], ...] for a source connector. */
    public boolean alterSourceOffsets(String configJson, String offsetsJson) throws Exception {
        Map<String, String> config = Host.JSON.readValue(configJson, new TypeReference<Map<String, String>>() {});
        @SuppressWarnings("unchecked")
        List<List<Map<String, Object>>> pairs = (List<List<Map<String, Object>>>) Schemaless.read(offsetsJson);
        Map<Map<String, ?>, Map<String, ?>> offsets = new HashMap<>();
        for (List<Map<String, Object>> pair : pairs) {
            offsets.put(pair.get(0), pair.get(1));
        }
        return Loaders.with(loader, () -> ((SourceConnector) connector).alterOffsets(config, offsets));
    }

    /** KIP-875: [[topic, partition, offset or null], ...] for a sink connector. */
    public boolean alterSinkOffsets(String configJson, String offsetsJson) throws Exception {
        Map<String, String> config = Host.JSON.readValue(configJson, new TypeReference<Map<String, String>>() {});
        List<List<Object>> rows = Host.JSON.readValue(offsetsJson, new TypeReference<List<List<Object>>>() {});
        Map<TopicPartition, Long> offsets = new HashMap<>();
        for (List<Object> row : rows) {
            Object offset = row.get(2);
            offsets.put(new TopicPartition((String) row.get(0), ((Number) row.get(1)).intValue()),
                offset == null ? null : ((Number) offset).longValue());
        }
        return Loaders.with(loader, () -> ((SinkConnector) connector).alterOffsets(config, offsets));
    }

    private class SinkContext implements SinkConnectorContext {
        @Override
        public void requestTaskReconfiguration() {
            callbacks.requestTaskReconfiguration(instance);
        }

        @Override
        public void raiseError(Exception error) {
            callbacks.raiseError(instance, Traces.of(error));
        }
    }

    private class SourceContext implements SourceConnectorContext {
        @Override
        public void requestTaskReconfiguration() {
            callbacks.requestTaskReconfiguration(instance);
        }

        @Override
        public void raiseError(Exception error) {
            callbacks.raiseError(instance, Traces.of(error));
        }

        @Override
        public OffsetStorageReader offsetStorageReader() {
            return new OffsetReader(instance, callbacks);
        }
    }
}
