"""skassess serve in a real browser: Debian's Chromium, headless, driven by Selenium.

Two annotators label at once, one browser closes mid-item, the server is
SIGKILLed and started again: nothing is lost or duplicated, each annotator
sees the item it saw, and every label carries its annotator. The page is laid
out without overlap at 1280 and 390 pixels.
"""

import os
import shutil
import signal
import socket
import subprocess
import sys
import time

import pandas as pd
import pytest

webdriver = pytest.importorskip("selenium.webdriver")
pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
from selenium.common.exceptions import StaleElementReferenceException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402

from skassess.session import LabelingSession  # noqa: E402

from ..helpers import PNG  # noqa: E402

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
DRIVER = shutil.which("chromedriver")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not (CHROMIUM and DRIVER), reason="needs chromium and chromedriver"),
]


@pytest.fixture
def pool(tmp_path, data):
    n = 300
    classes = [f"class {k}" for k in range(10)]
    frame = pd.DataFrame(data.scores[:n], columns=[f"score_{c}" for c in classes])
    frame.insert(0, "id", [f"item{i}" for i in range(n)])
    frame.to_csv(tmp_path / "scores.csv", index=False)
    (tmp_path / "images").mkdir()
    for i in range(n):
        (tmp_path / "images" / f"item{i}.png").write_bytes(PNG)
    return tmp_path, frame


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class _Server:
    """``skassess serve`` in a process of its own."""

    def __init__(self, folder, port):
        self.folder, self.port, self.process = folder, port, None

    def start(self):
        command = [
            sys.executable,
            "-m",
            "skassess",
            "serve",
            str(self.folder / "scores.csv"),
            "--session",
            str(self.folder / "s.sqlite"),
            "--items",
            str(self.folder / "images"),
            "--seed",
            "5",
            "--port",
            str(self.port),
        ]
        self.process = subprocess.Popen(
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True
        )
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(self.process.stderr.read().decode())
            try:
                socket.create_connection(("127.0.0.1", self.port), 1).close()
                return self
            except OSError:
                time.sleep(0.2)
        raise RuntimeError("the server did not start")

    def kill(self):
        os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait()

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/"


def _browser(width=1280):
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"):
        options.add_argument(flag)
    driver = webdriver.Chrome(service=Service(DRIVER), options=options)
    driver.set_window_size(width, 900)
    driver.implicitly_wait(20)
    return driver


def _sign_in(driver, url, name):
    driver.get(url)
    driver.find_element(By.NAME, "name").send_keys(name + "\n")
    return _shown(driver)


def _shown(driver):
    deadline = time.monotonic() + 30
    while True:
        try:
            return driver.find_element(By.TAG_NAME, "h2").text.removeprefix("Item ")
        except StaleElementReferenceException:  # the page was replaced between find and read
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def _press(driver, key):
    """Label (or skip) the shown item with a keyboard key; the next item's id."""
    before = _shown(driver)
    driver.find_element(By.TAG_NAME, "body").send_keys(key)
    deadline = time.monotonic() + 30
    while _shown(driver) == before and time.monotonic() < deadline:
        time.sleep(0.05)
    return _shown(driver)


def test_two_annotators_a_closed_browser_and_a_killed_server(pool):
    folder, frame = pool
    server = _Server(folder, _free_port()).start()
    ana, ben = _browser(), _browser()
    try:
        a, b = _sign_in(ana, server.url, "ana"), _sign_in(ben, server.url, "ben")
        for key in "123":
            assert a != b
            a, b = _press(ana, key), _press(ben, key)
        ben.quit()  # closed mid-item: ben's item stays his
        server.kill()
        server.start()
        ana.refresh()
        assert _shown(ana) == a  # the same item after the restart
        ben = _browser()
        assert _sign_in(ben, server.url, "ben") == b
        _press(ana, "4")
    finally:
        ana.quit()
        ben.quit()
        server.kill()
    events, _, _ = LabelingSession.read_events(folder / "s.sqlite")
    labels = events[events["kind"] == "label"]
    assert len(labels) == 7
    assert labels.groupby("annotator").size().to_dict() == {"ana": 4, "ben": 3}
    assert not labels.duplicated(["row", "annotator"]).any()
    assert labels["item_id"].tolist() == [frame["id"][r] for r in labels["row"]]


_BOXES = """
const boxes = [];
for (const sel of arguments[0]) {
  for (const el of document.querySelectorAll(sel)) {
    const r = el.getBoundingClientRect();
    boxes.push([sel, r.left, r.top, r.right, r.bottom]);
  }
}
return [boxes, document.documentElement.scrollWidth, window.innerWidth];
"""


@pytest.mark.parametrize("width", [1280, 390])
def test_the_page_is_laid_out_without_overlap(pool, tmp_path, width):
    folder, _ = pool
    server = _Server(folder, _free_port()).start()
    driver = _browser(width)
    try:
        _sign_in(driver, server.url, "ana")
        driver.save_screenshot(str(tmp_path / f"serve-{width}.png"))
        boxes, scroll_width, inner = driver.execute_script(
            _BOXES, ["#item", "#posterior", "button", "header > *"]
        )
    finally:
        driver.quit()
        server.kill()
    assert scroll_width <= inner  # nothing wider than the window
    for i, (sa, *a) in enumerate(boxes):
        for sb, *b in boxes[i + 1 :]:
            if {sa, sb} == {"#item", "button"}:  # the buttons sit inside the item
                continue
            apart = a[2] <= b[0] or b[2] <= a[0] or a[3] <= b[1] or b[3] <= a[1]
            assert apart, f"{sa} {a} overlaps {sb} {b}"
    assert (tmp_path / f"serve-{width}.png").stat().st_size > 1000
