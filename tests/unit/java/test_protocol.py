"""The JVM host protocol: every message has one handler on the side that receives it and crosses the
socket (pickled) unchanged; what Python may call in the JVM is a closed list."""

from __future__ import annotations

import pickle

from runtime.java import protocol as p
from runtime.java.client import JvmHost
from runtime.java.host import METHODS, HostProcess


def test_the_host_handles_every_message_sent_to_it() -> None:
    assert set(HostProcess.HANDLERS) == set(p.TO_HOST)


def test_the_python_side_handles_every_message_the_host_sends() -> None:
    # Ready answers the Start of one process: its reader thread takes it, not the dispatch table
    assert set(JvmHost.HANDLERS) | {p.Ready} == set(p.TO_PYTHON)


def test_messages_cross_the_socket_unchanged() -> None:
    failure = p.JavaFailure("java.lang.IllegalStateException", "no", "java.lang.IllegalStateException: no\n", False)
    for message in [
        p.Start(("a.jar",), "/jvm/libjvm.so", ("-Xmx1g",), ("/plugins/x",), "text", (("root", 20),)),
        p.Create(1, "source_task", "a.Connector", "a.Task", "task-1"),
        p.Invoke(2, 7, "poll"),
        p.Release(7),
        p.OffsetsAnswer(3, "[]", None),
        p.SetLogLevel("io.debezium", 10),
        p.Exit(),
        p.Ready(42, failure),
        p.Result(2, b"{}", None),
        p.OffsetsQuestion(4, "task-1", "[{}]"),
        p.Reconfigure("connector-1"),
        p.RaiseError("connector-1", "trace"),
    ]:
        assert pickle.loads(pickle.dumps(message)) == message


def test_only_the_plugin_api_is_reachable() -> None:
    assert METHODS["source_task"] == {"version", "start", "poll", "commit", "commitRecords", "stop"}
    assert "getClass" not in set().union(*METHODS.values())
