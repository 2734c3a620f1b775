"""The lowest layer beside the model: where segue keeps its own files (:mod:`~segue.support.places`,
:mod:`~segue.support.state_dir`), its version, and names imported on first use
(:mod:`~segue.support.lazy`)."""
