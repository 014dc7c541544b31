package runtimejava;

import java.util.concurrent.Callable;

/** Runs plugin code with the plugin's class loader as the thread's context loader, as Kafka's LoaderSwap. */
final class Loaders {
    private Loaders() {}

    static <T> T with(ClassLoader loader, Callable<T> call) throws Exception {
        Thread thread = Thread.currentThread();
        ClassLoader previous = thread.getContextClassLoader();
        thread.setContextClassLoader(loader);
        try {
            return call.call();
        } finally {
            thread.setContextClassLoader(previous);
        }
    }

    interface Action {
        void run() throws Exception;
    }

    static void run(ClassLoader loader, Action action) throws Exception {
        with(loader, () -> {
            action.run();
            return null;
        });
    }
}
