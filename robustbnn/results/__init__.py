"""The results layer: what a run's results are and how they are kept, below ``run/`` and
``report/``.

* :mod:`~robustbnn.results.names`: the closed vocabulary of tasks, metrics and columns;
* :mod:`~robustbnn.results.schema`: a result row (:class:`~robustbnn.results.schema.Result`),
  its typed settings and the ranges its values may take;
* :mod:`~robustbnn.results.store`: atomic writes, and the results file written and read back
  (checked on read);
* :mod:`~robustbnn.results.scores`: the per-example scores a run keeps for its figures;
* :mod:`~robustbnn.results.paths`: file names from data, and the refusal of linked run parts;
* :mod:`~robustbnn.results.manifest`: the list of reports a render wrote.

It imports nothing from the bench, the models or the reports (docs/architecture.md).
"""
