"""Apache Airflow provider for Kafka Connect REST APIs (this project's runtime or Apache Kafka Connect)."""

__version__ = "0.1.0"
