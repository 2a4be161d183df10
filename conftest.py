from threadpoolctl import threadpool_limits

collect_ignore = ["docs/conf.py", "benchmarks", "examples"]

# The suite runs on as many processes as there are cores (pytest-xdist, "-n auto"); one BLAS
# thread per process keeps them from competing for the same cores.
threadpool_limits(1)
