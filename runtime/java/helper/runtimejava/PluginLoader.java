package runtimejava;

import java.io.IOException;
import java.net.URL;
import java.net.URLClassLoader;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Enumeration;
import java.util.List;
import java.util.regex.Pattern;

/**
 * One plugin's class loader, as Kafka Connect's PluginClassLoader: its own jars first, except for the
 * classes every plugin must share with the runtime (the Java platform, Kafka's Connect API and clients,
 * SLF4J), which come from the parent, the runtime's own set.
 */
public final class PluginLoader extends URLClassLoader {
    static {
        ClassLoader.registerAsParallelCapable();
    }

    // Shared with the runtime: what Kafka's PluginUtils does not load in isolation (its connectors,
    // converters and transforms excepted, which a plugin may bring in versions of its own).
    private static final Pattern SHARED = Pattern.compile(
        "^(?:java\\.|javax\\.(?!annotation\\.|inject\\.|ws\\.rs\\.|xml\\.bind\\.)|jdk\\.|sun\\.|com\\.sun\\."
            + "|org\\.omg\\.|org\\.w3c\\.dom|org\\.xml\\.sax|org\\.ietf\\.jgss|org\\.slf4j\\.|runtimejava\\."
            + "|org\\.apache\\.kafka\\.(?!connect\\.(?:transforms\\.|json\\.|file\\.|mirror\\.|converters\\."
            + "|storage\\.StringConverter|storage\\.SimpleHeaderConverter)))");

    private final String location;

    public PluginLoader(String location, URL[] urls, ClassLoader parent) {
        super(urls, parent);
        this.location = location;
    }

    public String location() {
        return location;
    }

    static boolean shared(String name) {
        return SHARED.matcher(name).lookingAt();
    }

    @Override
    protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
        if (shared(name)) {
            return super.loadClass(name, resolve);
        }
        synchronized (getClassLoadingLock(name)) {
            Class<?> found = findLoadedClass(name);
            if (found == null) {
                try {
                    found = findClass(name);
                } catch (ClassNotFoundException notHere) {
                    found = getParent().loadClass(name);
                }
            }
            if (resolve) {
                resolveClass(found);
            }
            return found;
        }
    }

    @Override
    public URL getResource(String name) {
        URL own = findResource(name);
        return own != null ? own : super.getResource(name);
    }

    @Override
    public Enumeration<URL> getResources(String name) throws IOException {
        List<URL> all = new ArrayList<>(Collections.list(findResources(name)));
        all.addAll(Collections.list(getParent().getResources(name)));
        return Collections.enumeration(all);
    }
}
