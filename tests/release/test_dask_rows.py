"""The fit on a Dask cluster (ddppm.release.dask_rows): on ``distributed.LocalCluster`` with two worker processes,
the release of a ``dask.array`` (and of a Dask DataFrame) is the in-memory fit's, its statistics summed on the
workers by a tree reduction; a bad block is refused on the worker with the data holder's message."""

from __future__ import annotations

import numpy as np
import pytest

from ddppm import PrivatePCA
from ddppm.core.errors import DataError
from tests.release.test_stream import BOUNDS, WINE, _same

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0",
                                  silence_logs=40) as cluster, distributed.Client(cluster) as client:  # fmt: skip
        yield client


def _model(method: str = "analyze_gauss", **settings) -> PrivatePCA:
    return PrivatePCA(2, 20.0, 1e-6, BOUNDS, method=method, noise="simulation", random_state=5, **settings)


@pytest.mark.parametrize(("method", "trust", "standardize"), [("analyze_gauss", "central", True),
                                                              ("ppm_theirs_sqrt2", "central", "center"),
                                                              ("conventional", "local", False)])  # fmt: skip
def test_the_fit_on_the_cluster_is_the_in_memory_fit(client, method, trust, standardize):
    one = _model(method, trust=trust, standardize=standardize).fit(WINE)
    rows = da.from_array(WINE, chunks=(23, 4))  # uneven row blocks, split columns: rechunked to whole rows
    streamed = _model(method, trust=trust, standardize=standardize).fit_stream(rows)
    _same(one, streamed)
    assert len(client.cluster.workers) == 2 and streamed.passes_ >= 1


def test_a_dask_dataframe_and_a_bad_block(client):
    import dask.dataframe as dd
    import pandas as pd

    frame = dd.from_pandas(pd.DataFrame(WINE), npartitions=3)
    _same(_model().fit(WINE), _model().fit_stream(frame))
    bad = WINE.copy()
    bad[170, 2] = np.nan
    model = _model()
    with pytest.raises(DataError, match="holds NaN, infinite or empty values"):
        model.fit_stream(da.from_array(bad, chunks=(50, 13)))
    assert not hasattr(model, "components_")
    with pytest.raises(DataError, match="0 row"):
        _model().fit_stream(da.from_array(WINE[:0], chunks=(10, 13)))
