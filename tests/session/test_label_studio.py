"""Label Studio both ways: tasks in its format, its export's annotations into a session."""

import json
import xml.etree.ElementTree as ET

import pandas as pd
import pytest

from skassess.cli import main
from skassess.session import (
    LabelingSession,
    label_studio_config,
    read_label_studio_export,
)

CLASSES = [f"c{k}" for k in range(9)] + ['a "quoted" & <odd> class']


@pytest.fixture
def pool(tmp_path, data):
    n = 400
    frame = pd.DataFrame(data.scores[:n], columns=[f"score_{c}" for c in CLASSES])
    frame.insert(0, "id", [f"item{i}" for i in range(n)])
    frame["caption"] = [f"text {i}" for i in range(n)]
    frame.to_csv(tmp_path / "scores.csv", index=False)
    return tmp_path


def _cli(pool, action, *extra):
    return main(
        [
            "label-studio",
            action,
            str(pool / "scores.csv"),
            "--session",
            str(pool / "s.sqlite"),
            "--display",
            "caption",
            *extra,
        ]
    )


def _choice(name):
    return {
        "id": "r1",
        "from_name": "label",
        "to_name": "item",
        "type": "choices",
        "value": {"choices": [name]},
    }


def _annotation(who, name, cancelled=False):
    """One annotation as Label Studio exports it (its ids and times included)."""
    return {
        "id": 1001,
        "result": [] if cancelled else [_choice(name)],
        "was_cancelled": cancelled,
        "ground_truth": False,
        "created_at": "2026-11-30T10:00:00.000000Z",
        "updated_at": "2026-11-30T10:00:00.000000Z",
        "lead_time": 3.2,
        "task": 1,
        "completed_by": who,
    }


def _export(*tasks):
    return [
        {"id": i + 1, "project": 7, "data": {"id": item, "priority": 1}, "annotations": notes}
        for i, (item, notes) in enumerate(tasks)
    ]


def test_tasks_are_label_studio_tasks_in_the_samplers_order(pool):
    out, config = pool / "tasks.json", pool / "config.xml"
    args = ["--next", "5", "--out", str(out), "--config", str(config), "--seed", "2"]
    assert _cli(pool, "tasks", *args, "--image-url", "/data/local-files/?d=img/{id}.png") == 0
    tasks = json.loads(out.read_text())
    assert [t["data"]["priority"] for t in tasks] == [5, 4, 3, 2, 1]
    assert len({t["data"]["id"] for t in tasks}) == 5
    for task in tasks:
        item = task["data"]["id"]
        assert task["data"]["image"] == f"/data/local-files/?d=img/{item}.png"
        (prediction,) = task["predictions"]
        (result,) = prediction["result"]
        assert result["type"] == "choices" and result["value"]["choices"][0] in CLASSES
        assert (result["from_name"], result["to_name"]) == ("label", "item")
        assert 0 <= prediction["score"] <= 1
    root = ET.fromstring(config.read_text())  # the config is XML, its names escaped
    assert [c.get("value") for c in root.iter("Choice")] == CLASSES
    assert root.find("Image").get("value") == "$image"
    # the same tasks again: the sampler's next items have not changed
    again = pool / "again.json"
    assert _cli(pool, "tasks", "--next", "5", "--out", str(again)) == 0
    assert [t["data"]["id"] for t in json.loads(again.read_text())] == [
        t["data"]["id"] for t in tasks
    ]


def test_an_export_imports_with_annotators_repeats_and_skips(pool, capsys):
    export = _export(
        ("item3", [_annotation(1, "c2"), _annotation({"id": 2, "email": "b@x.org"}, "c4")]),
        ("item7", [_annotation(1, "c1", cancelled=True)]),
        ("item9", [_annotation(1, CLASSES[-1]), _annotation(1, CLASSES[-1])]),
    )
    path = pool / "export.json"
    path.write_text(json.dumps(export))
    assert _cli(pool, "import", "--export", str(path), "--seed", "1") == 0
    assert "imported 3 labels (0 already in the session, 1 skipped" in capsys.readouterr().out
    events, _, _ = LabelingSession.read_events(pool / "s.sqlite")
    labels = events[events["kind"] == "label"]
    assert labels[["item_id", "annotator", "label"]].values.tolist() == [
        ["item3", "user 1", 2],
        ["item3", "b@x.org", 4],
        ["item9", "user 1", 9],
    ]
    assert _cli(pool, "import", "--export", str(path)) == 0  # nothing new the second time
    assert "imported 0 labels (3 already" in capsys.readouterr().out
    # round trip: the session's labels exported and read back are the export's
    out = pool / "back.json"
    assert _cli(pool, "export", "--out", str(out)) == 0
    back = read_label_studio_export(out, CLASSES)
    assert back.equals(read_label_studio_export(export, CLASSES))


@pytest.mark.parametrize(
    "tasks, message",
    [
        ([{"data": {"image": "x"}, "annotations": []}], "task 1 has no data.id"),
        (_export(("item1", [_annotation(1, "c9")])), "task 1 (id 'item1'), annotation 1"),
        (
            _export(("item1", [_annotation(1, "c1"), _annotation(1, "c2")])),
            "'user 1' labels item 'item1' 'c2' here and 'c1' in another annotation",
        ),
        (
            _export(("item1", [dict(_annotation(1, "c1"), result=[_choice("c1")] * 2)])),
            "holds 2 choices results",
        ),
        (_export(("item1", [_annotation(None, "c1")])), "completed_by names no annotator"),
    ],
)
def test_a_bad_export_is_refused_naming_the_task(tasks, message):
    with pytest.raises(ValueError, match="task") as info:
        read_label_studio_export(tasks, CLASSES)
    assert message in str(info.value)


def test_an_unknown_id_or_a_conflict_with_the_session_imports_nothing(pool, capsys):
    path = pool / "export.json"
    path.write_text(json.dumps(_export(("item3", [_annotation(1, "c2")]))))
    assert _cli(pool, "import", "--export", str(path), "--seed", "1") == 0
    capsys.readouterr()
    path.write_text(
        json.dumps(_export(("item5", [_annotation(1, "c1")]), ("item3", [_annotation(1, "c3")])))
    )
    assert _cli(pool, "import", "--export", str(path)) == 2
    assert "otherwise than the session holds; nothing was imported" in capsys.readouterr().err
    path.write_text(json.dumps(_export(("nope", [_annotation(1, "c1")]))))
    assert _cli(pool, "import", "--export", str(path)) == 2
    assert "the id 'nope' is not in the scores file" in capsys.readouterr().err
    events, _, _ = LabelingSession.read_events(pool / "s.sqlite")
    assert len(events) == 1


def test_the_config_of_a_text_project():
    root = ET.fromstring(label_studio_config(["yes", "no"], kind="text"))
    assert root.find("Text").get("value") == "$text"
    with pytest.raises(ValueError, match="kind must be"):
        label_studio_config(["yes"], kind="audio")
