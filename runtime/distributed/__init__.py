"""Distributed mode: a group of workers sharing the config, offset and status topics (issue 5).

librdkafka does not expose Kafka Connect's own group protocol, and the Tansu broker used in tests lists
no group members, so membership and assignment are built on the internal topics themselves.

Membership (membership.py)
    Each worker writes `worker-heartbeat-<worker id>` records to the status topic every
    `heartbeat.interval.ms`, from a thread of their own (a tick blocked on a slow connector is not a dead
    worker): its REST URL, an incarnation id, its start time and the assignment generation
    it has applied. A peer is live while its last heartbeat, timed on the reader's own clock, is younger
    than `session.timeout.ms`; a tombstone of the key (graceful shutdown) removes it at once. The Java
    reference logs and skips these unknown status keys (KIP-915).

Leader
    The live worker that started first (ties by worker id). Every worker computes it from the same
    heartbeats, it does not change when others join, and it needs no election round.

Assignment (assignment.py)
    The leader computes a balanced, sticky placement of connectors and of tasks (separately, round-robin
    over the least loaded workers; units stay where they are while their owner lives) and publishes it
    as `assignment-<group.id>` in the config topic with generation = previous + 1, its units in part
    records of at most 1,000 written just before it (no record over about 40 KB at any size). The config
    topic has a single partition, so every worker sees assignments in one order and follows the latest.
    The Java reference skips these keys with a log line. The leader recomputes only when the config
    snapshot, the assignment, the live members or the held workers changed.

Reconciling (herder.py, the tick thread)
    On every record that matters (and every 200 ms, skipped while the config snapshot, the assignment and
    its fencing are the very objects it last reconciled; a full pass every 5 s) a worker compares what it
    runs with its share of the latest assignment and the stored configs: it first stops what it lost (writing UNASSIGNED, or removing
    statuses of deleted connectors and removed tasks), then acknowledges the generation in an immediate
    heartbeat, then starts what it gained and applies target states and config changes. Connector owners
    generate task configs and write them (task-/commit- records) when they differ from the stored ones or
    the connector config changed since the last commit; tasks restart on a new commit, so a config change
    restarts each task once, with both configs new (as the reference). Statuses carry the generation.
    Creates, deletes and target-state changes wait (5 s at most) until the owners report the new state,
    so it is usually visible when the request returns; a follower's view may trail by one read of the
    status topic (tens of ms).

Guarantees
    - No task runs twice because of a rebalance between live workers: a unit moving from one live worker
      to another is first left out of a generation (revoked); the leader hands it out only in a later
      generation, published once every live worker has acknowledged the revoking one (its revocations are
      done). A worker that stays silent longer than the session timeout while "live" is skipped with a warning.
    - A dead worker's units are reassigned after `session.timeout.ms` plus one tick, unless
      `scheduled.rebalance.max.delay.ms` (KIP-415; default 5 min) keeps them for its return (tests set 0).
      A worker whose own heartbeats have not come back for a session timeout stops all its work, so a worker
      cut off from Kafka does not keep running what the others have reassigned; a worker paused (not cut
      off) may overlap with the new owner for up to one tick after it resumes. Sources and sinks are
      at-least-once across failover: replays stay within one offset-flush interval.
    - Two workers may briefly both consider themselves leader while heartbeats propagate; both publish
      into the one config partition, every worker follows the last record, and the revocation rule still
      holds for each generation.
    - Clocks: liveness uses each reader's monotonic clock; only heartbeats replayed at startup are aged by
      their wall-clock timestamp, and the leader choice uses start times, so clocks need only be roughly in sync.

Routing
    Leader-only operations (create/update/patch/delete, stop, restart with parameters, offsets) raise
    NotLeader(leader url) elsewhere; the REST layer forwards them. Pause/resume write target-state records
    on any worker. Plain connector and task restarts run on the owning worker (NotAssigned(owner url) from
    the leader, a subclass of NotLeader so the REST layer forwards it). Parameterised restarts write a
    `restart-connector-` record that every owner applies (KIP-745). Stop writes an empty task set, then the
    STOPPED target state (KIP-875); offsets change only when STOPPED with zero tasks and no rebalance pending
    (409 otherwise, after waiting briefly for one that is under way).
"""
