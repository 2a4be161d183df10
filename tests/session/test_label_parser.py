"""One reading of a label's text for every reader: files, oracle command, keyboard, Python."""

import csv
import json
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from skassess import ActiveAssessor
from skassess.cli import main
from skassess.cli._keyboard import _parse
from skassess.cli._oracle import CommandOracle, read_oracle
from skassess.exceptions import LabelError, ScoresFileError
from skassess.session import LabelingSession, ScoresFile
from skassess.session._label_parser import LabelParser

# Names that trip a reader that tries numbers, commands or case before the exact name.
TRICKY = [
    "0", "1", "2", "3", "1.0", "2.0", "01", "#0", "#1", "7", "1e0", "-1", "10",
    "skip", "quit", "s", "q", "u", "h", "?", ":q", "help", "undo",
    "Cat", "cat", "CAT", "é", "e\u0301", "Straße", "strasse", "ß", "名前", "NA", "None",
]  # fmt: skip
# File readers: no delimiter, quote or line break in a name; no blank name.
NAME = st.one_of(
    st.sampled_from(TRICKY),
    st.text(
        st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp"), blacklist_characters=',;\t|"'),
        min_size=1,
        max_size=6,
    ).filter(lambda t: t.strip() == t and t != ""),
)
CLASSES = st.lists(NAME, min_size=2, max_size=6, unique=True)


# ----------------------------------------------------------------- the rules
def test_a_name_wins_over_a_class_number():
    stars = LabelParser(["1", "2", "3"])
    assert [stars.parse(t) for t in ("1", "2", "3")] == [0, 1, 2]
    assert stars.parse("1", numbers=True) == 0  # never class number 1
    assert stars.parse("#1", numbers=True) == 1
    with pytest.raises(LabelError, match="'0' is not a class"):
        stars.parse("0", numbers=True)  # no class is named 0; a bare number is not an index here


def test_integer_valued_numbers_read_as_the_class_of_that_number():
    years = LabelParser(["2019", "2020"])
    assert years.parse("2020.0") == 1 and years.parse(" 2019 ") == 0
    with pytest.raises(LabelError, match="several classes"):
        LabelParser(["7", "7.0"]).parse("7.00")  # two classes have the value 7
    assert LabelParser(["7", "7.0"]).parse("7.0") == 1  # the exact name first


def test_case_and_unicode_normalization_and_ambiguity():
    parser = LabelParser(["Cat", "dog", "e\u0301"])
    assert parser.parse("cat") == 0 and parser.parse("DOG") == 1 and parser.parse("é") == 2
    with pytest.raises(LabelError, match="several classes"):
        LabelParser(["Cat", "cat"]).parse("CAT")
    assert LabelParser(["Cat", "cat"]).parse("cat") == 1


def test_bare_numbers_are_class_numbers_only_without_numeric_names():
    parser = LabelParser(["cat", "dog"])
    assert parser.parse("1", numbers=True) == 1 and parser.parse("#0", numbers=True) == 0
    with pytest.raises(LabelError, match="a file names classes, not class numbers"):
        parser.parse("1")  # a file: names only
    with pytest.raises(LabelError, match="'#2' is not a class"):
        parser.parse("#2", numbers=True)


def test_commands_give_way_to_class_names():
    letters = LabelParser(["q", "s", "x"])
    assert letters.command("q") is None and letters.command(":q") == "quit"
    assert letters.command("u") == "undo" and letters.command(":S") == "skip"
    assert letters.shadowed_commands() == ["q", "s"]
    assert _parse("q", ["q", "s", "x"]) == ("label", 0)
    assert _parse(":q", ["q", "s", "x"]) == ("quit", None)
    assert _parse("q", ["a", "b"]) == ("quit", None)


def test_parse_many_marks_unknown_and_ambiguous():
    codes = LabelParser(["Cat", "cat", "dog"]).parse_many(["dog", "CAT", "bird", "cat", "dog"])
    np.testing.assert_array_equal(codes, [2, -2, -1, 1, 2])


# ------------------------------------------------------- every reader, property
def _scores_file(path, classes, labels):
    """A scores file with classes= given by name and a label column of names."""
    k = len(classes)
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", *[f"score_{j}" for j in range(k)], "label"])
        for i, lab in enumerate(labels):
            w.writerow([f"i{i}", *([1 / k] * k), lab])
    return ScoresFile(path, classes=classes)


_ECHO = """
import json, sys
answers = json.load(open(sys.argv[1], encoding="utf-8"))
for line in sys.stdin:
    print(answers[json.loads(line)["id"]], flush=True)
"""


@pytest.mark.slow
@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(classes=CLASSES, data=st.data())
def test_every_reader_records_exactly_the_named_class(classes, data, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("names")
    k = len(classes)
    truth = data.draw(st.lists(st.integers(0, k - 1), min_size=k, max_size=8))
    truth = list(range(k)) + truth  # every class at least once
    names = [classes[j] for j in truth]
    n = len(truth)

    # the scores file's label column
    sf = _scores_file(tmp / "scores.csv", classes, names)
    table = sf.read()
    np.testing.assert_array_equal(table.labels, truth)

    # --oracle CSV
    with open(tmp / "oracle.csv", "w", newline="", encoding="utf-8") as f:
        w = csv.writer(f)
        w.writerow(["id", "label"])
        w.writerows([[f"i{i}", lab] for i, lab in enumerate(names)])
    codes = read_oracle(tmp / "oracle.csv", table.ids, classes, "id")
    np.testing.assert_array_equal(codes, truth)

    # --oracle-command
    (tmp / "answers.json").write_text(
        json.dumps({f"i{i}": lab for i, lab in enumerate(names)}), encoding="utf-8"
    )
    (tmp / "echo.py").write_text(_ECHO, encoding="utf-8")
    command = f'"{sys.executable}" "{tmp / "echo.py"}" "{tmp / "answers.json"}"'
    with CommandOracle(command, table, classes) as oracle:
        assert [oracle(i) for i in range(n)] == truth

    # the keyboard
    assert [_parse(name, classes) for name in names] == [("label", j) for j in truth]

    # the Python session API, a label given as text
    scores = np.full((n, k), 1 / k)
    assessor = ActiveAssessor(strategy="random", random_state=0)
    with LabelingSession(tmp / "s.sqlite", scores, assessor=assessor, classes=classes) as session:
        for i, name in enumerate(names):
            session.tell(i, name)
        rows, labels = session.labeled_rows()
    np.testing.assert_array_equal(labels[np.argsort(rows)].astype(int), truth)


def test_scores_file_refuses_an_ambiguous_label(tmp_path):
    with pytest.raises(ScoresFileError, match=r"row 2 \(line 3\), column 'label'.*several"):
        _scores_file(tmp_path / "a.csv", ["Cat", "cat"], ["Cat", "CAT"]).read()


def test_oracle_file_reads_integer_valued_numbers(tmp_path):
    pd.DataFrame({"id": ["a", "b", "c"], "label": ["2.0", "1", ""]}).to_csv(
        tmp_path / "o.csv", index=False
    )
    codes = read_oracle(tmp_path / "o.csv", np.array(["a", "b", "c"]), ["1", "2", "3"], "id")
    np.testing.assert_array_equal(codes, [1, 0, -1])


def test_session_refuses_a_text_that_names_no_class(tmp_path):
    scores = np.full((4, 3), 1 / 3)
    assessor = ActiveAssessor(strategy="random", random_state=0)
    with LabelingSession(
        tmp_path / "s.sqlite", scores, assessor=assessor, classes=["1", "2", "3"]
    ) as session:
        with pytest.raises(LabelError, match="'0' is not a class"):
            session.tell(0, "0")
        assert session.n_labeled == 0
        session.tell(0, 2)  # an int is the class index, as ActiveAssessor takes it
        assert session.labeled_rows()[1].tolist() == [2]


# ------------------------------------------------- star ratings, end to end
@pytest.fixture
def stars(tmp_path):
    """200 items rated 1/2/3 (60 % are 1), scores that point at the right rating."""
    rng = np.random.default_rng(1)
    truth = rng.choice(3, size=200, p=[0.6, 0.25, 0.15])
    scores = rng.dirichlet(np.ones(3), size=200) * 0.4
    scores[np.arange(200), truth] += 0.6
    ids = [f"r{i}" for i in range(200)]
    frame = pd.DataFrame({"id": ids} | {f"score_{c}": scores[:, c - 1] for c in (1, 2, 3)})
    frame.to_csv(tmp_path / "stars.csv", index=False)
    names = [str(t + 1) for t in truth]
    return tmp_path, ids, names


def _session_labels(path):
    events, info, _ = LabelingSession.read_events(path)
    events = events[events["kind"] == "label"]
    return dict(
        zip(
            events["item_id"],
            [info["classes"][int(k)] for k in events["label"]],
            strict=True,
        )
    )


def _check_stars(path, ids, names, n):
    got = _session_labels(path)
    truth = dict(zip(ids, names, strict=True))
    assert len(got) == n
    assert all(got[i] == truth[i] for i in got), "a label was recorded as another class"


@pytest.mark.slow
def test_star_ratings_through_the_oracle_file(stars):
    tmp, ids, names = stars
    written = [f"{float(n):.1f}" if i % 2 else n for i, n in enumerate(names)]  # 1.0 and 1
    pd.DataFrame({"id": ids, "label": written}).to_csv(tmp / "truth.csv", index=False)
    argv = ["label", str(tmp / "stars.csv"), "--session", str(tmp / "f.sqlite"), "--seed", "0"]
    argv += ["--oracle", str(tmp / "truth.csv"), "--budget", "60", "--no-progress"]
    assert main(argv) == 0
    _check_stars(tmp / "f.sqlite", ids, names, 60)


@pytest.mark.slow
def test_star_ratings_through_the_oracle_command(stars):
    tmp, ids, names = stars
    (tmp / "answers.json").write_text(json.dumps(dict(zip(ids, names, strict=True))))
    (tmp / "echo.py").write_text(_ECHO)
    argv = ["label", str(tmp / "stars.csv"), "--session", str(tmp / "c.sqlite"), "--seed", "0"]
    argv += ["--budget", "60", "--no-progress"]
    argv += ["--oracle-command", f'"{sys.executable}" "{tmp / "echo.py"}" "{tmp / "answers.json"}"']
    assert main(argv) == 0
    _check_stars(tmp / "c.sqlite", ids, names, 60)


def test_star_ratings_through_piped_keyboard_input(stars, monkeypatch, capsys):
    import io

    tmp, ids, names = stars
    truth = dict(zip(ids, names, strict=True))
    session = tmp / "k.sqlite"

    class Keyboard(io.StringIO):
        """Answers the item the prompt just showed, by its id."""

        def readline(self, *args):
            shown = capsys.readouterr().out
            item = shown.rsplit("item ", 1)[1].split()[0]
            return truth[item] + "\n"

    monkeypatch.setattr("sys.stdin", Keyboard())
    argv = ["label", str(tmp / "stars.csv"), "--session", str(session), "--seed", "0"]
    assert main([*argv, "--budget", "40"]) == 0
    _check_stars(session, ids, names, 40)
