"""skassess serve: labeling in the browser, several annotators, safe by default."""

import os
import re

import pandas as pd
import pytest

pytest.importorskip("starlette")
from starlette.testclient import TestClient  # noqa: E402

from skassess.cli import main  # noqa: E402
from skassess.cli._arguments import build_parser  # noqa: E402
from skassess.cli._serve import build  # noqa: E402

from ..helpers import PNG  # noqa: E402


@pytest.fixture
def pool(tmp_path, data):
    """300 rows of the Fashion-MNIST scores, their ids and a text column; no labels."""
    n = 300
    classes = [f"c{k}" for k in range(9)] + ["<b>bold</b>"]
    frame = pd.DataFrame(data.scores[:n], columns=[f"score_{c}" for c in classes])
    frame.insert(0, "id", [f"item{i}" for i in range(n)])
    frame["caption"] = [f"caption <script>alert({i})</script>" for i in range(n)]
    frame.to_csv(tmp_path / "scores.csv", index=False)
    images = tmp_path / "images"
    images.mkdir()
    for i in range(n):
        (images / f"item{i}.png").write_bytes(PNG)
    return tmp_path, data.target[:n], classes


def _serve(folder, *extra):
    args = build_parser().parse_args(
        [
            "serve",
            str(folder / "scores.csv"),
            "--session",
            str(folder / "s.sqlite"),
            "--seed",
            "3",
            "--display",
            "caption",
            "--item-column",
            "caption",
            "--items",
            str(folder / "images"),
            *extra,
        ]
    )
    app, session = build(args)
    return TestClient(app, base_url="http://127.0.0.1"), session, app


def _field(html, name):
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    return None if found is None else found.group(1)


def _login(client, name):
    page = client.get("/")
    assert page.status_code == 200 and "Your name" in page.text
    page = client.post("/login", data={"name": name, "csrf": _field(page.text, "csrf")})
    assert page.status_code == 200, page.text
    return page


def _label(client, page, code):
    row, csrf = _field(page.text, "row"), _field(page.text, "csrf")
    return client.post("/label", data={"row": row, "csrf": csrf, "label": str(code)})


def test_two_annotators_label_distinct_items_each_attributed(pool):
    folder, truth, _ = pool
    client, session, _ = _serve(folder)
    other = TestClient(client.app, base_url="http://127.0.0.1")
    try:
        a, b = _login(client, "ana"), _login(other, "ben")
        assert "Labeling as ana" in a.text and "Labeling as ben" in b.text
        assert _field(a.text, "row") != _field(b.text, "row")
        for _ in range(3):
            a = _label(client, a, truth[int(_field(a.text, "row"))])
            b = _label(other, b, truth[int(_field(b.text, "row"))])
            assert _field(a.text, "row") != _field(b.text, "row")
        notes = session.annotations()
        assert notes.groupby("annotator").size().to_dict() == {"ana": 3, "ben": 3}
        assert notes["row"].nunique() == 6
    finally:
        session.close()


def test_a_label_is_accepted_once_and_a_forged_form_is_refused(pool):
    folder, _, _ = pool
    client, session, _ = _serve(folder)
    try:
        page = _login(client, "ana")
        row, csrf = _field(page.text, "row"), _field(page.text, "csrf")
        assert (
            client.post("/label", data={"row": row, "csrf": csrf, "label": "1"}).status_code == 200
        )
        again = client.post("/label", data={"row": row, "csrf": csrf, "label": "1"})
        assert again.status_code == 200 and session.n_labeled == 1  # the same form twice
        page = client.get("/")
        row = _field(page.text, "row")
        forged = client.post("/label", data={"row": row, "csrf": "0" * 64, "label": "1"})
        assert forged.status_code == 403 and session.n_labeled == 1
        # another site's form: no cookie (SameSite=Strict), so no annotator
        stranger = TestClient(client.app, base_url="http://127.0.0.1")
        response = stranger.post("/label", data={"row": row, "csrf": "x", "label": "1"})
        assert "Your name" in response.text and session.n_labeled == 1
        bad = client.post(
            "/label", data={"row": row, "csrf": _field(page.text, "csrf"), "label": "99"}
        )
        assert bad.status_code == 400 and session.n_labeled == 1
    finally:
        session.close()


def test_a_restarted_server_shows_each_annotator_the_same_item(pool):
    folder, truth, _ = pool
    client, session, _ = _serve(folder)
    other = TestClient(client.app, base_url="http://127.0.0.1")
    a, b = _login(client, "ana"), _login(other, "ben")
    a = _label(client, a, truth[int(_field(a.text, "row"))])
    shown = _field(a.text, "row"), _field(b.text, "row")
    cookies = dict(client.cookies), dict(other.cookies)
    session.close()  # the process dies with both items shown
    client, session, _ = _serve(folder)
    try:
        again = [
            TestClient(client.app, base_url="http://127.0.0.1", cookies=c).get("/") for c in cookies
        ]
        assert (_field(again[0].text, "row"), _field(again[1].text, "row")) == shown
        assert session.n_labeled == 1 and session.annotations()["annotator"].tolist() == ["ana"]
    finally:
        session.close()


def test_pages_escape_the_data_and_allow_no_outside_script(pool):
    folder, _, _ = pool
    client, session, _ = _serve(folder)
    try:
        page = _login(client, "ana")
        assert "<script>alert(" not in page.text and "&lt;script&gt;alert(" in page.text
        assert "<b>bold</b>" not in page.text and "&lt;b&gt;bold&lt;/b&gt;" in page.text
        policy = page.headers["content-security-policy"]
        assert "default-src 'none'" in policy and "frame-ancestors 'none'" in policy
        nonce = re.search(r"script-src 'nonce-([^']+)'", policy).group(1)
        assert re.findall(r"<script[^>]*>", page.text) == [f'<script nonce="{nonce}">']
        assert ' style="' not in page.text and "http" not in page.text.split("<body>")[1]
        assert len(page.content) < 64 * 1024  # one small page, nothing else to load
    finally:
        session.close()


def test_item_images_come_from_the_folder_only(pool, tmp_path):
    folder, _, _ = pool
    secret = tmp_path / "secret.png"
    secret.write_bytes(PNG + b"secret")
    client, session, _ = _serve(folder)
    try:
        page = _login(client, "ana")
        row = int(_field(page.text, "row"))
        image = client.get(f"/item/{row}")
        assert image.status_code == 200 and image.content == PNG
        assert image.headers["content-type"] == "image/png"
        others = [r for r in range(300) if r != row]
        assert client.get(f"/item/{others[0]}").status_code == 404  # not this annotator's item
        assert client.get("/item/..%2Fsecret").status_code == 404
        # a symbolic link out of the folder is not followed
        (folder / "images" / f"item{row}.png").unlink()
        os.symlink(secret, folder / "images" / f"item{row}.png")
        assert client.get(f"/item/{row}").status_code == 404
    finally:
        session.close()


def test_bodies_are_capped_and_hosts_checked(pool):
    folder, _, _ = pool
    client, session, _ = _serve(folder)
    try:
        _login(client, "ana")
        big = client.post(
            "/label",
            content=b"x" * 100_000,
            headers={"content-type": "application/x-www-form-urlencoded"},
        )
        assert big.status_code == 413
        rebound = TestClient(client.app, base_url="http://attacker.example")
        assert rebound.get("/").status_code == 400
    finally:
        session.close()


def test_undo_takes_back_ones_own_last_label_only(pool):
    folder, truth, _ = pool
    client, session, _ = _serve(folder)
    other = TestClient(client.app, base_url="http://127.0.0.1")
    try:
        a, b = _login(client, "ana"), _login(other, "ben")
        first = _field(a.text, "row")
        a = _label(client, a, 0)
        undo = {"row": _field(b.text, "row"), "csrf": _field(b.text, "csrf")}
        b = _label(other, b, 0)
        refused = client.post(
            "/undo", data={"row": _field(a.text, "row"), "csrf": _field(a.text, "csrf")}
        )
        assert refused.status_code == 409 and session.n_labeled == 2  # ben's label is last
        back = other.post(
            "/undo", data={"row": _field(b.text, "row"), "csrf": _field(b.text, "csrf")}
        )
        assert back.status_code == 200 and session.n_labeled == 1
        assert _field(back.text, "row") == undo["row"]  # ben's item again
        assert session.annotations()["row"].astype(str).tolist() == [first]
    finally:
        session.close()


def test_beyond_this_machine_only_token_links_sign_in(pool):
    folder, _, _ = pool
    client, session, app = _serve(folder, "--host", "0.0.0.0", "--annotators", "ana", "ben")
    try:
        page = client.get("/")
        assert "link with your token" in page.text and "Your name" not in page.text
        assert client.post("/login", data={"name": "ana", "csrf": "x"}).status_code == 403
        assert client.get("/login?name=ana&token=" + "0" * 64).status_code == 403
        signed = client.get(app.state.links["ana"])
        assert signed.status_code == 200 and "Labeling as ana" in signed.text
        stolen = TestClient(client.app, base_url="http://127.0.0.1")
        assert stolen.get(app.state.links["ben"].replace("ben", "eve")).status_code == 403
    finally:
        session.close()


def test_review_shows_disagreements_and_the_annotators(pool):
    folder, truth, classes = pool
    client, session, _ = _serve(folder, "--repeat-share", "0.5")
    other = TestClient(client.app, base_url="http://127.0.0.1")
    try:
        a = _login(client, "ana")
        for _ in range(4):
            a = _label(client, a, 0)
        b = _login(other, "ben")
        assert "A second label" in b.text  # ben is asked about one of ana's items
        b = _label(other, b, 1)
        review = other.get("/review")
        assert review.status_code == 200 and "ana: c0" in review.text and "ben: c1" in review.text
        assert "n_repeated" in review.text
    finally:
        session.close()


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--host", "0.0.0.0"], "name the annotators"),
        (["--repeat-share", "1.5"], "--repeat-share must be in [0, 1)"),
        (["--metrics", "accuracy"], "takes every label as the truth"),
    ],
)
def test_serve_refuses_with_one_line(pool, capsys, extra, message):
    folder, _, _ = pool
    args = ["serve", str(folder / "scores.csv"), "--session", str(folder / "s.sqlite"), *extra]
    assert main(args) == 2
    assert message in capsys.readouterr().err
    assert not (folder / "s.sqlite").exists()


def test_serve_refuses_a_scores_file_with_labels(pool, capsys):
    folder, truth, classes = pool
    frame = pd.read_csv(folder / "scores.csv")
    frame["label"] = [classes[k] for k in truth]
    frame.to_csv(folder / "labeled.csv", index=False)
    args = ["serve", str(folder / "labeled.csv"), "--session", str(folder / "s.sqlite")]
    assert main(args) == 2
    assert "without an annotator" in capsys.readouterr().err
    assert not (folder / "s.sqlite").exists()
