"""The Kafka Connect view in Airflow's UI: an Airflow plugin (FastAPI app and external view) over the hooks."""
