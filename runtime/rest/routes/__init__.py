"""The REST API's routers, one per resource, each over the typed herder interface (runtime/herder/interface.py).

Every herder call runs off the event loop (run_in_threadpool, or LeaderCalls for leader-only operations)."""
