"""tracerl collector: OTLP in, ClickHouse out."""
