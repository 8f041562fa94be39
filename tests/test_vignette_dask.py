"""Scale-out of a paper vignette: one full replication of [LZW] Examples 5.1 and 5.2 (every a, c
and lambda of the LUM grid, refits, test errors and probability errors) on a two-worker Dask
LocalCluster gives exactly the serial numbers."""

import pandas as pd
import pytest

from cohstats.tuning.parallel import scheduler_backend
from cohstats.vignettes.lum_simulations import simulate


def test_lum_replication_on_two_worker_cluster_equals_serial():
    distributed = pytest.importorskip("distributed")
    kw = dict(reps=1, seed=11, examples=("5.1", "5.2"), real=(), n_test=2000)
    serial = simulate(n_jobs=None, **kw)
    with (
        distributed.LocalCluster(processes=False, n_workers=2, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        with distributed.get_task_stream(client) as ts:
            with scheduler_backend(cluster.scheduler_address):
                on_dask = simulate(n_jobs=-1, **kw)
        workers = {t.get("worker") for t in ts.data}
    assert len(ts.data) >= 2 and len(workers) == 2  # both workers computed replications
    pd.testing.assert_frame_equal(serial.reset_index(drop=True), on_dask.reset_index(drop=True))
    assert serial["example"].nunique() == 2 and len(serial) > 40
