"""Connectors as code: a declared desired state, a plan against a live cluster, and its application."""
