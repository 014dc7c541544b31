package runtimejava.logging;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What SLF4J logs in this JVM, for Python's logging: the levels Python gave each logger name (its
 * /admin/loggers changes included) decide what is logged; the events wait in a bounded queue that a Python
 * thread drains into the logger of the same name. A full queue drops events (counted) rather than block
 * the plugin's thread.
 */
public final class PythonLogs {
    // Python's numbers for log4j's level names
    public static final int TRACE = 5;
    public static final int DEBUG = 10;
    public static final int INFO = 20;
    public static final int WARN = 30;
    public static final int ERROR = 40;

    private static final Map<String, Integer> EXPLICIT = new ConcurrentHashMap<>();
    private static final Map<String, Integer> EFFECTIVE = new ConcurrentHashMap<>();
    private static final BlockingQueue<String[]> EVENTS = new ArrayBlockingQueue<>(10_000);
    private static final AtomicLong DROPPED = new AtomicLong();
    private static volatile int rootLevel = INFO;

    private PythonLogs() {}

    /** A logger's level (`root`: every logger): Python's LogLevels.set, for the loggers of this JVM. */
    public static synchronized void setLevel(String namespace, int level) {
        if (namespace.equalsIgnoreCase("root")) {
            EXPLICIT.clear();
            rootLevel = level;
        } else {
            String prefix = namespace + ".";
            EXPLICIT.keySet().removeIf(name -> name.startsWith(prefix));
            EXPLICIT.put(namespace, level);
        }
        EFFECTIVE.clear();
    }

    static int level(String name) {
        Integer cached = EFFECTIVE.get(name);
        if (cached != null) {
            return cached;
        }
        int level = rootLevel;
        String candidate = name;
        while (true) {
            Integer explicit = EXPLICIT.get(candidate);
            if (explicit != null) {
                level = explicit;
                break;
            }
            int dot = candidate.lastIndexOf('.');
            if (dot < 0) {
                break;
            }
            candidate = candidate.substring(0, dot);
        }
        EFFECTIVE.put(name, level);
        return level;
    }

    static void log(String name, int level, String message, Throwable error) {
        String trace = null;
        if (error != null) {
            StringWriter out = new StringWriter();
            error.printStackTrace(new PrintWriter(out));
            trace = out.toString();
        }
        if (!EVENTS.offer(new String[] {name, Integer.toString(level), message, trace})) {
            DROPPED.incrementAndGet();
        }
    }

    /** The next event {name, level, message, trace or null}, or null after `timeoutMs`. */
    public static String[] take(long timeoutMs) throws InterruptedException {
        return EVENTS.poll(timeoutMs, TimeUnit.MILLISECONDS);
    }

    public static long dropped() {
        return DROPPED.getAndSet(0);
    }
}
