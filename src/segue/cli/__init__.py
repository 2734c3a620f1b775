"""The command line, the top layer: the ``segue`` commands (:mod:`~segue.cli.app`, with
:mod:`~segue.cli.threads` and the modules it loads when named), how they render for a person
(:mod:`~segue.cli.render`) and the documents they print with ``--json``
(:mod:`~segue.cli.documents`). Each command calls one library function below it."""
