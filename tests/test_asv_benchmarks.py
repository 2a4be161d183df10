"""Every asv benchmark runs once, on its smallest parameters (speed is not asserted)."""

import importlib
import inspect
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MODULES = sorted(p.stem for p in (ROOT / "asv_benchmarks").glob("bench_*.py"))


def _cases():
    for name in MODULES:
        module = importlib.import_module(f"asv_benchmarks.{name}")
        for _, cls in inspect.getmembers(module, inspect.isclass):
            if cls.__module__ != module.__name__:
                continue
            methods = [m for m in dir(cls) if m.startswith(("time_", "peakmem_", "mem_"))]
            for method in methods:
                yield pytest.param(cls, method, id=f"{name}.{cls.__name__}.{method}")


@pytest.mark.slow
@pytest.mark.parametrize("cls, method", list(_cases()))
def test_benchmark_runs(cls, method, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT))
    params = getattr(cls, "params", None)
    if params is None:
        args = ()
    else:
        grid = params if isinstance(params[0], list) else [params]
        args = tuple(min(p) for p in grid)
    bench = cls()
    if hasattr(bench, "setup"):
        bench.setup(*args)
    try:
        getattr(bench, method)(*args)
    finally:
        if hasattr(bench, "teardown"):
            bench.teardown(*args)
