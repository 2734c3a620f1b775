"""Claude Code's session files: read, written, forked."""
