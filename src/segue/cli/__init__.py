"""The command line, the top layer: the ``segue`` commands (:mod:`~segue.cli.app`, with
:mod:`~segue.cli.fleet` and :mod:`~segue.cli.threads`), how they render for a person
(:mod:`~segue.cli.render`, :mod:`~segue.cli.render_batches`) and the documents they print with
``--json`` (:mod:`~segue.cli.documents`, :mod:`~segue.cli.batch_documents`). Each command calls
one library function below it."""
