"""`connect-runtime distributed WORKER.properties`: a worker of a Connect cluster sharing the config, offset
and status topics with the other members of its group (`group.id`)."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from ..api.errors import ConfigError
from ..config_providers import ConfigResolver
from ..distributed.member import GroupMember, Timing
from ..distributed.statuses import GenerationStatuses
from ..herder.distributed import DistributedHerder
from ..herder.fencing import cluster_transactional_id
from ..herder.interface import Herder
from ..herder.topics import StatusTopics
from ..plugins import Plugins
from ..storage.kafka_config_store import KafkaConfigStore
from ..storage.kafka_log import KafkaStoreError
from ..storage.kafka_stores import KafkaStoreSettings
from ..storage.restart_records import StatusTopicRestartLedger
from ..worker.counters import RebalanceCounters
from ..worker.offsets import OffsetsManager, SourceOffsetStores
from ..worker.worker import Worker
from .startup import StartupError
from .worker_runtime import WorkerRuntime

log = logging.getLogger("runtime.bootstrap")


class DistributedRuntime(WorkerRuntime):
    mode = "distributed"

    settings: KafkaStoreSettings
    timing: Timing

    def _check_settings(self) -> None:
        config = self.config
        if not config.bootstrap_servers:
            raise StartupError('Missing required configuration "bootstrap.servers" which has no default value.', 2)
        try:
            self.settings = KafkaStoreSettings.from_worker(config)
            self.timing = Timing.from_worker(config)
        except (ConfigError, ValueError) as exc:
            raise StartupError(f"Invalid worker properties: {exc}", 2) from None

    def _build_herder(
        self, plugins: Plugins, resolver: ConfigResolver, worker_id: str, cluster_id: str | None
    ) -> DistributedHerder:
        config, settings = self.config, self.settings
        url = f"{'https' if self.ssl_context is not None else 'http'}://{worker_id}"
        status_store = settings.status_store()
        config_store = self._config_store()
        offset_store = settings.offset_store()
        # KIP-618: a source connector's own `offsets.storage.topic`, with a copy in the worker's offsets topic
        source_stores = SourceOffsetStores(
            config,
            offset_store,
            settings.offset_topic,
            settings.client_config,
            settings.read_strategy,
            resolve=resolver.resolve,
        )
        # GET offsets is given only the connector's name: its stored config says which topic to read
        offsets = OffsetsManager(config, offset_store, source_stores, connector_config=_stored_config(config_store))
        rebalance = RebalanceCounters()
        wakeup = threading.Event()  # the tick thread's: the member sets it on a join or a placement read
        member = GroupMember(
            config_store,
            status_store,
            worker_id,
            url,
            settings.client_config["group.id"],
            self.timing,
            settings.client_config,
            rebalance,
            on_change=wakeup.set,
        )
        statuses = self.statuses = GenerationStatuses(status_store, member.status_generation, member.fenced)
        self.restart_ledger = StatusTopicRestartLedger(status_store)  # before the store replays the topic
        topics = StatusTopics(config, status_store)
        worker = Worker(
            config,
            plugins,
            offset_store,
            statuses,
            worker_id,
            on_topic=topics.record,
            resolver=resolver,
            source_offset_stores=source_stores,
            rebalance=rebalance,
        )
        return DistributedHerder(
            config,
            plugins,
            worker,
            member,
            config_store,
            status_store,
            statuses,
            offsets,
            topics,
            cluster_id,
            wakeup,
            broker_monitor=self.broker_monitor,
        )

    def _config_store(self) -> KafkaConfigStore:
        """The config topic's store; with exactly-once source support (`preparing`, `enabled`) the leader writes
        it through its transactional producer, and it is read committed: from its record batches and their
        transaction markers (the reference reads it committed only with `enabled`, but its reader reads to the
        end past the markers either way; ours reads past them in its committed view)."""
        settings = self.settings
        group_id = settings.client_config["group.id"]
        transactional = self.config.transactional_leader_enabled()
        return KafkaConfigStore(
            settings.config_topic,
            {**settings.client_config, "client.id": f"{group_id}-configs"},
            read_strategy=settings.read_strategy,
            transactional_id=cluster_transactional_id(group_id) if transactional else None,
            consumer_config={"isolation.level": "read_committed"} if transactional else None,
        )

    def _start_herder(self, herder: Herder) -> None:
        try:
            herder.start()
        except (KafkaStoreError, ValueError) as exc:
            if self.sockets is not None:
                self.sockets.close()
            raise StartupError(f"Could not start the worker's internal topics: {exc}", 2) from None


def _stored_config(config_store: KafkaConfigStore) -> Callable[[str], dict[str, str] | None]:
    def stored_config(name: str) -> dict[str, str] | None:
        """The connector config last read from the config topic."""
        state = config_store.snapshot().connectors.get(name)
        return dict(state.config) if state is not None else None

    return stored_config
