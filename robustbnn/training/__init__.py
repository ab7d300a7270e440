"""Training: fit a model, cache its weights by content, and keep the trained ones in a process.

* :mod:`~robustbnn.training.fit`: the training loop (:func:`~robustbnn.training.fit.fit`);
* :mod:`~robustbnn.training.cache`: the model cache (content keys, atomic entries, locks);
* :mod:`~robustbnn.training.fit_or_load`: build a model, then load it or train it under the
  cache entry's lock (:class:`~robustbnn.training.fit_or_load.FitRecord`);
* :mod:`~robustbnn.training.memo`: the process's last trained models, checked.
"""
