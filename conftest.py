collect_ignore = ["docs/conf.py", "benchmarks", "examples"]
