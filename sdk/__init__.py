"""tracerl: train existing AI agents with reinforcement learning from their OpenTelemetry traces."""

__version__ = "0.1.0"
