"""Codex's session files: read, written, forked."""
