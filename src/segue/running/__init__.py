"""What runs on this machine now: the agents (each provider's CLI processes and the sessions
they hold, :mod:`~segue.running.agents`), their tmux panes (:mod:`~segue.running.tmux`) and each
provider's usage windows (:mod:`~segue.running.usage`). Above the providers, below the store."""
