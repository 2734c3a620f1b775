"""Many agents at once: a batch that moves every agent off a provider and back
(:mod:`~segue.fleet.batch`), and relaunching each in its tmux pane (:mod:`~segue.fleet.relaunch`).
Above the single switch, below the command line."""
