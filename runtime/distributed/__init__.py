"""Distributed mode: a group of workers sharing the config, offset and status topics.

Membership (group.py, connect_protocol.py)
    As in Apache Kafka Connect, the broker's group coordinator decides who is in the group, who leads it
    and which generation is current (JoinGroup, SyncGroup, Heartbeat, LeaveGroup). librdkafka does not
    expose custom group protocols, so the member is kafka-python's `BaseCoordinator` with protocol type
    `connect` and the reference's formats: a member's metadata is its URL, its config topic offset and
    what it holds; the leader's SyncGroup assignment to each member says what it gains and what it must
    revoke, the leader's URL, the config offset it assigned at and the KIP-415 delay. Kafka's tools see
    a Connect group. Heartbeats run on kafka-python's IO thread; joins on a thread of their own; the
    tick thread reports every tick that it lives, and a tick thread stalled longer than
    `rebalance.timeout.ms` makes the worker leave the group.

Rebalances (member.py's `perform_assignment`, assignor.py)
    The leader reads the config topic to its end, takes what each member reports it holds as the current
    placement (plus, for `scheduled.rebalance.max.delay.ms`, what departed workers held), and computes a
    balanced, sticky placement (assignment.py). A unit that must move between two members is only
    revoked in this generation: its owner stops it, then rejoins, and the next rebalance hands it out
    (incremental cooperative rebalancing, KIP-415). The whole placement, tagged with the generation,
    is written to the config topic as `assignment-<group.id>` records (parts of at most 1,000 units; no
    record over about 40 KB at any size; the reference skips these keys with a log line, KIP-915) before
    the leader answers SyncGroup, and each member reads the config topic up to the offset in its
    assignment before applying it. The placement also holds every member's URL, for forwarding.

Between rebalances
    A change that does not change membership must not wait for a rebalance. Creates, deletes, stops,
    resumes and tasks.max changes are config records; the leader's tick places new units on the least
    loaded members and drops deleted ones, moving nothing (a unit revoked by the current generation waits
    until its owner reports it stopped, or for the next rebalance), and writes the updated placement with the same generation. Every worker
    applies only placements of the generation it holds: a leader that was frozen and lost its
    generation cannot hand out anything, and a worker that lost it ignores what it reads until it has
    rejoined.

Reconciling (runtime/herder/local_work.py, on the tick thread of runtime/herder/tick.py)
    On every record that matters (and every 200 ms, skipped while the config snapshot, the placement and
    the fencing are the very objects it last reconciled; a full pass every 5 s) a worker compares what it
    runs with its share of the placement and the stored configs: it first stops what it lost (writing
    UNASSIGNED, or removing statuses of deleted connectors and removed tasks), then starts what it gained
    and applies target states and config changes. Connectors start and stop on threads of their own
    (the worker's; a start() that blocks holds up nothing else; a stop or restart of that connector
    waits for it; nothing waits for a stop()). Connector owners generate task configs and write them
    (task-/commit- records) when they differ from the stored ones or the connector config changed since
    the last commit; tasks restart on a new commit, so a config change restarts each task once, with
    both configs new (as the reference). Statuses carry the group generation. Creates, deletes and
    target-state changes wait (5 s at most) until the owners report the new state, so it is usually
    visible when the request returns.

Fencing
    A worker out of the group stops everything: removed by the coordinator (a heartbeat or join answered
    UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION), or no heartbeat answered for a session timeout while it
    thought itself a member (a frozen process, Kafka out of reach; counted from the last answer, as
    kafka-python restarts its own clock when it looks the coordinator up again). It stays fenced until a
    heartbeat is answered in the generation it holds or it has taken up a new join: a rejoin answered
    by JoinGroup but not yet by SyncGroup is no generation to run anything in. It stops its work before
    it rejoins, and reports only what still runs when it joins (not its share of the lost generation,
    which others may run by now), so the leader never hands out a unit a live member runs; a unit two
    members report is revoked from both and handed out by the next rebalance.
    Back in the group, it reads the config topic to its end before starting anything. A worker frozen
    longer than the session timeout may overlap with the new owner of its units for the moments between
    waking and its first tick (its task threads wake too); sources and sinks are at-least-once across
    failover, replays staying within one offset-flush interval.

Routing (runtime/herder/distributed.py, over the GroupMember it holds)
    Leader-only operations (create/update/patch/delete, stop, restart with parameters, offsets) raise
    NotLeader(leader url) elsewhere; the REST layer forwards them. Pause/resume write target-state records
    on any worker. Plain connector and task restarts run on the owning worker (NotAssigned(owner url) from
    the leader, a subclass of NotLeader so the REST layer forwards it). A request forwarded to the leader
    is routed again as soon as this worker follows another leader (runtime/rest/forwarding.py). Parameterised restarts write a
    `restart-connector-` record that every owner applies (KIP-745). Stop writes an empty task set, then the
    STOPPED target state (KIP-875); offsets change only when STOPPED with no tasks assigned or reporting a
    status and no rebalance under way (409 otherwise, after waiting briefly for one to finish).

Earlier versions of this project kept membership in `worker-heartbeat-<id>` records of the status topic
and numbered placements on their own; their records are still read and ignored.
"""
