from airflow_provider_connect.hooks.connect import ConnectHook

__all__ = ["ConnectHook"]
