import pytest


@pytest.fixture(scope="session")
def dask_client():
    """A distributed.Client on a local cluster of two worker processes (closed at the end)."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0"
        ) as cluster,
        distributed.Client(cluster) as client,
    ):
        yield client
