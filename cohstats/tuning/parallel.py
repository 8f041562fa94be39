"""Independent fits through joblib, with a progress bar that works in a terminal and a notebook."""

from __future__ import annotations

from contextlib import contextmanager

from ..validation import in_notebook, progress_bar  # noqa: F401 - the fits' bars live in the ground layer


def _parallel(func, tasks, n_jobs, verbose, desc):
    """Run ``func(*task)`` for every task through joblib, in order, with a progress bar."""
    from joblib import Parallel, delayed

    tasks = list(tasks)
    if not tasks:
        return []
    bar = progress_bar(len(tasks), desc, verbose)
    out = []
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(func)(*t) for t in tasks)
    for r in gen:
        out.append(r)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out


@contextmanager
def scheduler_backend(scheduler):
    """Run the enclosed joblib work on a Dask cluster when ``scheduler`` is given.

    ``scheduler`` is a ``dask.distributed.Client`` or a scheduler address such as
    ``"tcp://127.0.0.1:8786"``; None leaves joblib's configuration as it is (so
    ``with joblib.parallel_config(backend="dask"):`` around the call works too).
    """
    if scheduler is None:
        yield
        return
    try:
        from distributed import Client
    except ImportError as e:  # pragma: no cover - exercised without dask
        raise ImportError("scheduler= needs dask.distributed: pip install 'dask[distributed]'") from e
    if isinstance(scheduler, Client):
        kw = {"client": scheduler}
    elif isinstance(scheduler, str):
        kw = {"scheduler_host": scheduler}
    else:
        raise TypeError(
            f"scheduler must be a dask.distributed Client or a scheduler address string; got {type(scheduler).__name__}"
        )
    import joblib

    with joblib.parallel_config(backend="dask", **kw):
        yield
