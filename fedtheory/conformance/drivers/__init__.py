"""Framework drivers: one module per third-party framework, named after it (docs/design.md, "Add a framework
driver"; verdicts in docs/frameworks.md).

A driver only translates the kit's problem (clients, ids, hyperparameters) into the framework's API and runs one
round with the framework's own classes. Two kinds:

* in process (``flower.py``, ``pfl.py``, ``sdane.py``): imported as ``fedtheory.conformance.drivers.<name>``;
* out of process (``appfl.py``, ``fedjax.py``, ``fedlab.py``, ``fedml.py``, ``fl4health.py``, ``flgo.py``,
  ``nvflare.py``): they import no fedtheory and run inside the framework's own venv, loaded by path by
  ``remote_worker.py`` (so ``drivers/flgo.py`` does not shadow the ``flgo`` package); benchmarks/frameworks/run.py
  lists their checks.

Nothing here is imported by the rest of the package: importing this package imports no framework.
"""
