"""KIP-618: the leader's config topic writes go through its transactional producer
(`connect-cluster-<group.id>`), which the next leader's claim fences: a leader that lost leadership cannot
write the config topic any more."""

from __future__ import annotations

import pytest

from runtime.storage.kafka_config_store import KafkaConfigStore, PrivilegedWriteError
from runtime.storage.kafka_log import TopicSpec
from tests.support.broker import unique

pytestmark = pytest.mark.integration


def test_a_leader_that_lost_leadership_cannot_write_the_config_topic(bootstrap_servers: str) -> None:
    """The config store as two successive leaders hold it (each claims `connect-cluster-<group>`), read
    committed as the distributed bootstrap builds it."""
    spec = TopicSpec(unique("leader-configs"), 1, 1, "config.storage.topic")
    client = {"bootstrap.servers": bootstrap_servers, "group.id": unique("leaders")}
    old, new, reader = (
        KafkaConfigStore(
            spec,
            {**client, "client.id": who},
            transactional_id=f"connect-cluster-{client['group.id']}",
            consumer_config={"isolation.level": "read_committed"},
        )
        for who in ("old-leader", "new-leader", "reader")
    )
    try:
        old.start()
        old.claim_write_privileges()
        old.put_connector_config("before", {"connector.class": "SequenceSource"})
        new.start()
        new.claim_write_privileges()  # elected: fences the old leader's producer
        with pytest.raises(PrivilegedWriteError):
            old.put_connector_config("from-the-old-leader", {"connector.class": "SequenceSource"})
        assert not old.has_write_privileges()
        with pytest.raises(PrivilegedWriteError, match="without claiming write privileges"):
            old.put_task_count_record("before", 1)
        new.put_connector_config("from-the-new-leader", {"connector.class": "SequenceSource"})
        old.put_target_state("before", old.snapshot().connectors["before"].target_state)  # any worker may
        reader.start()
        assert set(reader.snapshot().connectors) == {"before", "from-the-new-leader"}
    finally:
        for store in (old, new, reader):
            store.stop()
