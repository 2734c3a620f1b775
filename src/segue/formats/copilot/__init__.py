"""GitHub Copilot CLI's sessions: the event log ``session-state/<uuid>/events.jsonl``."""
