package runtimejava;

import java.io.PrintWriter;
import java.io.StringWriter;

final class Traces {
    private Traces() {}

    /** A throwable as Java prints it, the form of a FAILED status's trace in the reference. */
    static String of(Throwable error) {
        StringWriter out = new StringWriter();
        error.printStackTrace(new PrintWriter(out));
        return out.toString();
    }
}
