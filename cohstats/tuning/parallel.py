from __future__ import annotations

import sys




def _parallel(func, tasks, n_jobs, verbose, desc):
    """Run ``func(*task)`` for every task through joblib, in order, with a tqdm bar."""
    from joblib import Parallel, delayed

    tasks = list(tasks)
    if not tasks:
        return []
    bar = None
    if verbose and len(tasks) > 1:
        try:
            from tqdm.auto import tqdm
            # disable=None: silent when stderr is not a terminal
            bar = tqdm(total=len(tasks), desc=desc, disable=None, leave=False, file=sys.stderr)
        except Exception:  # pragma: no cover
            bar = None
    out = []
    gen = Parallel(n_jobs=n_jobs, return_as="generator")(delayed(func)(*t) for t in tasks)
    for r in gen:
        out.append(r)
        if bar is not None:
            bar.update(1)
    if bar is not None:
        bar.close()
    return out
