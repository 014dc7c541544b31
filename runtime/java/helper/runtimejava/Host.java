package runtimejava;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Enumeration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.kafka.common.config.Config;
import org.apache.kafka.common.config.ConfigDef;
import org.apache.kafka.common.config.ConfigValue;
import org.apache.kafka.connect.connector.Connector;

/**
 * The plugins of a worker's plugin.path that are Java (a folder of jars, or a jar, per plugin, as Kafka
 * Connect lays them out), each in a class loader of its own, found as Kafka Connect 3.6+ finds them with
 * plugin.discovery=service_load: by their ServiceLoader manifests. The Python side calls these methods
 * through JPype; what crosses is JSON text, never one call per record.
 */
public final class Host {
    static final ObjectMapper JSON = new ObjectMapper();

    // the plugin interfaces by the type names of GET /connector-plugins
    private static final String[][] KINDS = {
        {"org.apache.kafka.connect.sink.SinkConnector", "sink"},
        {"org.apache.kafka.connect.source.SourceConnector", "source"},
        {"org.apache.kafka.connect.transforms.Transformation", "transformation"},
        {"org.apache.kafka.connect.transforms.predicates.Predicate", "predicate"},
        {"org.apache.kafka.connect.storage.Converter", "converter"},
        {"org.apache.kafka.connect.storage.HeaderConverter", "header_converter"},
    };

    private final List<PluginLoader> loaders = new ArrayList<>();
    private final Map<String, PluginLoader> loaderOf = new LinkedHashMap<>();
    private final Map<String, String> kindOf = new LinkedHashMap<>();

    public Host(String[] locations) throws Exception {
        ClassLoader parent = Host.class.getClassLoader();
        for (String location : locations) {
            PluginLoader loader = new PluginLoader(location, jars(new File(location)), parent);
            loaders.add(loader);
            for (String[] kind : KINDS) {
                for (String name : manifest(loader, kind[0])) {
                    // the first location naming a class wins, as in Kafka's DelegatingClassLoader
                    if (!loaderOf.containsKey(name)) {
                        loaderOf.put(name, loader);
                        kindOf.put(name, kind[1]);
                    }
                }
            }
        }
    }

    /** A location's jars: itself, or every jar under the folder (nested folders too, as Kafka's PluginUtils). */
    private static URL[] jars(File location) throws Exception {
        List<URL> urls = new ArrayList<>();
        collect(location, urls);
        return urls.toArray(new URL[0]);
    }

    private static void collect(File file, List<URL> urls) throws Exception {
        if (file.isFile()) {
            String name = file.getName();
            if (name.endsWith(".jar") || name.endsWith(".zip")) {
                urls.add(file.toURI().toURL());
            }
            return;
        }
        File[] children = file.listFiles();
        if (children != null) {
            Arrays.sort(children);
            for (File child : children) {
                collect(child, urls);
            }
        }
    }

    private static List<String> manifest(PluginLoader loader, String service) throws Exception {
        List<String> names = new ArrayList<>();
        Enumeration<URL> files = loader.findResources("META-INF/services/" + service);
        while (files.hasMoreElements()) {
            try (BufferedReader reader = new BufferedReader(
                    new InputStreamReader(files.nextElement().openStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = reader.readLine()) != null) {
                    int comment = line.indexOf('#');
                    String name = (comment >= 0 ? line.substring(0, comment) : line).trim();
                    if (!name.isEmpty() && !names.contains(name)) {
                        names.add(name);
                    }
                }
            }
        }
        return names;
    }

    /** Every plugin: [{"class", "type", "version", "location"}], in the order found. */
    public String describe() throws Exception {
        ArrayNode out = JSON.createArrayNode();
        for (Map.Entry<String, PluginLoader> entry : loaderOf.entrySet()) {
            ObjectNode plugin = out.addObject();
            plugin.put("class", entry.getKey());
            plugin.put("type", kindOf.get(entry.getKey()));
            plugin.put("location", entry.getValue().location());
            plugin.put("version", version(entry.getKey()));
        }
        return JSON.writeValueAsString(out);
    }

    private String version(String name) {
        ClassLoader previous = Thread.currentThread().getContextClassLoader();
        try {
            Object plugin = newInstance(name);
            if (plugin instanceof org.apache.kafka.connect.components.Versioned) {
                return ((org.apache.kafka.connect.components.Versioned) plugin).version();
            }
            return null;
        } catch (Throwable error) {
            return null;
        } finally {
            Thread.currentThread().setContextClassLoader(previous);
        }
    }

    public ClassLoader loader(String name) {
        PluginLoader loader = loaderOf.get(name);
        if (loader == null) {
            throw new IllegalArgumentException("No Java plugin " + name + " in plugin.path");
        }
        return loader;
    }

    /** A new instance of a plugin class, or of a class its plugin's loader sees (a connector's task). */
    public Object newInstance(String name) throws Exception {
        return newInstance(name, name);
    }

    public Object newInstance(String plugin, String name) throws Exception {
        ClassLoader loader = loader(plugin);
        Thread.currentThread().setContextClassLoader(loader);
        Class<?> cls = Class.forName(name, true, loader);
        return cls.getDeclaredConstructor().newInstance();
    }

    /** Whether a connector's source task class overrides commitRecord() (the runtime then acknowledges each record). */
    public boolean commitsRecords(String plugin, String taskClass) throws Exception {
        return SourceTaskHandle.overridesCommitRecord(Class.forName(taskClass, false, loader(plugin)));
    }

    // ---- configuration ------------------------------------------------------------------------

    /** A plugin's ConfigDef: {"groups": [...], "keys": [ConfigKey as the reference's REST layer renders it]}. */
    public String configDef(String name) throws Exception {
        return JSON.writeValueAsString(renderDef(pluginConfig(newInstance(name))));
    }

    static ConfigDef pluginConfig(Object plugin) {
        if (plugin instanceof Connector) {
            return ((Connector) plugin).config();
        }
        if (plugin instanceof org.apache.kafka.connect.transforms.Transformation) {
            return ((org.apache.kafka.connect.transforms.Transformation<?>) plugin).config();
        }
        if (plugin instanceof org.apache.kafka.connect.transforms.predicates.Predicate) {
            return ((org.apache.kafka.connect.transforms.predicates.Predicate<?>) plugin).config();
        }
        if (plugin instanceof org.apache.kafka.connect.storage.Converter) {
            return ((org.apache.kafka.connect.storage.Converter) plugin).config();
        }
        if (plugin instanceof org.apache.kafka.connect.storage.HeaderConverter) {
            return ((org.apache.kafka.connect.storage.HeaderConverter) plugin).config();
        }
        return new ConfigDef();
    }

    static ObjectNode renderDef(ConfigDef def) {
        ObjectNode out = JSON.createObjectNode();
        if (def == null) {
            out.putNull("keys");
            return out;
        }
        ArrayNode groups = out.putArray("groups");
        def.groups().forEach(groups::add);
        ArrayNode keys = out.putArray("keys");
        for (ConfigDef.ConfigKey key : def.configKeys().values()) {
            ObjectNode k = keys.addObject();
            k.put("name", key.name);
            k.put("type", key.type.name());
            boolean required = ConfigDef.NO_DEFAULT_VALUE.equals(key.defaultValue);
            k.put("required", required);
            k.put("default", required ? null : ConfigDef.convertToString(key.defaultValue, key.type));
            k.put("importance", key.importance == null ? null : key.importance.name());
            k.put("documentation", key.documentation);
            k.put("group", key.group);
            k.put("order", key.orderInGroup);
            k.put("width", key.width == null ? null : key.width.name());
            k.put("display_name", key.displayName);
            ArrayNode dependents = k.putArray("dependents");
            if (key.dependents != null) {
                key.dependents.forEach(dependents::add);
            }
            k.put("internal", key.internalConfig);
        }
        return out;
    }

    /** A connector's validate(): [{"name", "value", "recommended_values", "errors", "visible"}], values rendered. */
    public String validate(String name, String configJson) throws Exception {
        Connector connector = (Connector) newInstance(name);
        @SuppressWarnings("unchecked")
        Map<String, String> config = JSON.readValue(configJson, Map.class);
        ConfigDef def = connector.config();
        Config result = connector.validate(config);
        if (result == null) {
            return "null";
        }
        ArrayNode out = JSON.createArrayNode();
        for (ConfigValue value : result.configValues()) {
            ConfigDef.ConfigKey key = def == null ? null : def.configKeys().get(value.name());
            ConfigDef.Type type = key == null ? null : key.type;
            ObjectNode v = out.addObject();
            v.put("name", value.name());
            v.put("value", render(value.value(), type));
            ArrayNode recommended = v.putArray("recommended_values");
            for (Object option : value.recommendedValues()) {
                recommended.add(render(option, type));
            }
            ArrayNode errors = v.putArray("errors");
            value.errorMessages().forEach(errors::add);
            v.put("visible", value.visible());
        }
        return JSON.writeValueAsString(out);
    }

    private static String render(Object value, ConfigDef.Type type) {
        if (value == null) {
            return null;
        }
        return type == null ? value.toString() : ConfigDef.convertToString(value, type);
    }
}
