"""``skassess example``: write the example scores file and its labels."""

import gzip
import shutil
from pathlib import Path

from ..datasets import example_scores_path


def run(args):
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("scores", "labels"):
        target = out / f"example_{name}.csv"
        with gzip.open(example_scores_path(name), "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        print(f"wrote {target}")
    return 0
