package runtimejava;

/** What a hosted plugin asks of the Python runtime; implemented in Python (a JPype proxy). */
public interface Callbacks {
    /** A connector asked for its task configs to be generated again. */
    void requestTaskReconfiguration(String instance);

    /** A connector failed from one of its own threads (ConnectorContext.raiseError): its Java trace. */
    void raiseError(String instance, String trace);

    /**
     * Committed source offsets from the runtime's offset store: a JSON array of source partitions in, a
     * JSON array of [partition, offset or null] pairs out.
     */
    String offsets(String instance, String partitionsJson);
}
