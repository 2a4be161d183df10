"""``skassess example``: write the example scores file and its labels."""

import gzip
import shutil
from pathlib import Path

from ..datasets import example_scores_path


def add_parser(sub):
    p = sub.add_parser(
        "example",
        help="write an example scores file to try assess and label on",
        description="Write example_scores.csv (2,000 Fashion-MNIST images scored by an MLP, "
        "100 of them labeled) and example_labels.csv (every true label, an oracle for "
        "label --oracle) into a directory.",
    )
    p.add_argument("--directory", default=".", help="where to write them (.)")
    p.set_defaults(func=run)


def run(args):
    out = Path(args.directory)
    out.mkdir(parents=True, exist_ok=True)
    for name in ("scores", "labels"):
        target = out / f"example_{name}.csv"
        with gzip.open(example_scores_path(name), "rb") as src, open(target, "wb") as dst:
            shutil.copyfileobj(src, dst)
        print(f"wrote {target}")
    return 0
