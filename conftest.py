from hypothesis import settings
from threadpoolctl import threadpool_limits

collect_ignore = ["docs/conf.py", "docs/auto_examples", "benchmarks", "examples"]

# The suite runs on as many processes as there are cores (pytest-xdist, "-n auto"); one BLAS
# thread per process keeps them from competing for the same cores.
threadpool_limits(1)

# Property tests draw the same examples on every run (derandomize), so a test run on a clean
# checkout is reproducible; `pytest --hypothesis-profile=explore` searches afresh with more
# examples, as a developer should before changing the math.
settings.register_profile("default", derandomize=True, print_blob=True)
settings.register_profile("explore", max_examples=500, print_blob=True)
settings.load_profile("default")


#: Examples in docstrings that run a whole labeling loop or fit a large model: their
#: doctests are long, and run with the other slow tests (``pytest -m slow``).
SLOW_DOCTESTS = {
    "skassess.meta._interval.PerformanceIntervalRegressor",
    "skassess.samplers._active.ActiveAssessor",
    "skassess.samplers._variance.VarianceSampling",
    "skassess.samplers._lucb.LUCBSampling",
    "skassess.samplers._anytime.AnytimeAnswersMixin.anytime_intervals",
    "skassess.calibration._hierarchical.HierarchicalBetaCalibrator",
}


def pytest_collection_modifyitems(config, items):
    import pytest

    for item in items:
        if item.name in SLOW_DOCTESTS:
            item.add_marker(pytest.mark.slow)
