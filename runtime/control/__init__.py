"""What the herder, the distributed group member and the worker share about requests and states, below
all three: errors carrying the HTTP status the REST layer answers with, KIP-745 restart plans, the
target-state rules, offset request parsing and messages (KIP-875), and the herder's stage tracking.
Nothing here runs anything; it imports only from the api, converters and storage layers.
"""
