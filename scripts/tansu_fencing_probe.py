"""Does the test broker let a fenced producer's write in? A probe of Tansu's transactions, no Connect involved.

Producer A (transactional id T) commits transactions of 20 records to topic `data` and one to topic `offs`,
as an exactly-once source task writes its records and their offsets, until producer B fences it by calling
init_transactions with T; B then commits one transaction to both topics. Apache Kafka refuses every write A
sends after the fence (PRODUCER_FENCED), so each of A's transactions is in both topics or in neither.

Tansu 0.6.0 aborts the old transaction and bumps the epoch in separate steps of its InitProducerId, so a write
A sends in between can land with no marker of its own: a "fenced write", which the next marker of the
producer id would end. The committed view (runtime/storage/committed_view.py) leaves such writes out by their
older epoch; this probe counts them and checks atomicity through it.

    .venv/bin/python scripts/tansu_fencing_probe.py [trials]    # about 3.5 s a trial

On 2026-11-28, two runs of 30 trials beside other load found 1 and 0 trials with a fenced write; runs of an
earlier version of it, without B's final transaction, left a transaction open for good in most runs (a
read_committed reader stops there).
"""

from __future__ import annotations

import random
import sys
import threading
import time

from confluent_kafka import KafkaException, Producer
from confluent_kafka.admin import AdminClient, NewTopic

from runtime.embedded_broker import EmbeddedBroker
from runtime.storage.committed_view import CommittedReader

TOPICS = ("data", "offs")


def run_a(bootstrap: str, tid: str, until: float, acked: list[int]) -> None:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid, "linger.ms": 5})
    producer.init_transactions(10)
    k = 0
    try:
        while time.monotonic() < until:
            producer.begin_transaction()
            for j in range(20):
                producer.produce("data", f"{tid}:{k}:{j}".encode(), partition=0)
            producer.produce("offs", f"{tid}:{k}".encode(), partition=0)
            producer.commit_transaction(10)
            acked.append(k)
            k += 1
    except KafkaException:
        pass  # fenced: what it sent after the fence must not count


def fence(bootstrap: str, tid: str) -> Producer:
    producer = Producer({"bootstrap.servers": bootstrap, "transactional.id": tid})
    producer.init_transactions(10)
    producer.begin_transaction()
    for topic in TOPICS:
        producer.produce(topic, b"B:" + tid.encode(), partition=0)
    producer.commit_transaction(10)
    return producer  # kept open: closing it could hide what is left behind


def committed(bootstrap: str, topic: str) -> tuple[dict[str, set[int]], int]:
    """Per transactional id, the transactions of A this topic holds committed; and the fenced writes left out."""
    reader = CommittedReader(topic, [0], {"bootstrap.servers": bootstrap}, "fencing-probe")
    try:
        records = reader.read_to_high_watermark(30)
    finally:
        reader.close()
    seen: dict[str, set[int]] = {}
    for record in records:
        fields = (record.value or b"").decode().split(":")
        if fields[0] != "B":
            seen.setdefault(fields[0], set()).add(int(fields[1]))
    return seen, reader.filters[0].fenced_writes


def main(trials: int) -> None:
    broker = EmbeddedBroker().start()
    try:
        bootstrap = broker.bootstrap_servers
        admin = AdminClient({"bootstrap.servers": bootstrap})
        for future in admin.create_topics([NewTopic(t, 1, 1) for t in TOPICS]).values():
            future.result()
        acked: dict[str, list[int]] = {}
        successors = []
        for trial in range(trials):
            tid = f"probe-{trial}"
            acked[tid] = []
            a = threading.Thread(target=run_a, args=(bootstrap, tid, time.monotonic() + 3, acked[tid]))
            a.start()
            time.sleep(0.3 + random.random() * 0.5)  # fence A somewhere in its stream of transactions
            successors.append(fence(bootstrap, tid))
            a.join()
        data, fenced_data = committed(bootstrap, "data")
        offs, fenced_offs = committed(bootstrap, "offs")
        broken = [t for t in acked if data.get(t, set()) != offs.get(t, set())]
        print(f"{trials} trials: fenced writes left out: {fenced_data} records in data, {fenced_offs} in offs")
        print(f"trials whose transactions are not all-or-nothing across the two topics: {broken or 'none'}")
    finally:
        broker.stop()


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 30)
