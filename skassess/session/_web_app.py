"""``skassess serve``: a labeling session in the browser, for several annotators at once.

One process holds the session file (its one writer); every label is told
with its annotator and committed before the next page is sent. Each
annotator holds one item at a time (a reservation, kept in the session file
so that a restarted server shows it again): the first of the sampler's
proposals that no one else holds, or, with ``repeat_share``, an item another
annotator labeled, where a second label is worth most.

Safe by default: a cookie names the annotator (signed with the server's key;
beyond this machine, only a token link sets it), every form carries a
signature of the annotator, the item and its reservation (so a label is
accepted once, and never from another site), request bodies are capped, the
Host header must be one the server was started for, and the pages allow no
script or style but their own.
"""

import asyncio
import re
import secrets
import threading
import time
from urllib.parse import quote

import numpy as np

from ..samplers import StopRule
from ._web_pages import label_page, login_page, message_page, review_page

__all__ = ["labeling_app"]

#: The least time between two computations of the estimate panel, in seconds (it is
#: shown as of the labels it was computed from; the labels themselves never wait).
ESTIMATE_INTERVAL = 1.0
#: The largest request body accepted, in bytes (a form holds a few short fields).
MAX_BODY_BYTES = 16 * 1024
COOKIE = "skassess_annotator"
_NAME = re.compile(r"^[^\x00-\x1f\x7f<>\"'&]{1,200}$")


class _BodyLimit:
    """ASGI middleware: refuse a request whose body exceeds ``limit`` bytes (413)."""

    def __init__(self, app, limit=MAX_BODY_BYTES):
        self.app, self.limit = app, limit

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        length = dict(scope.get("headers", [])).get(b"content-length")
        if length is not None and (not length.isdigit() or int(length) > self.limit):
            return await _too_large(send)
        seen = 0

        async def limited():
            nonlocal seen
            message = await receive()
            seen += len(message.get("body", b""))
            if seen > self.limit:
                raise _TooLarge
            return message

        try:
            await self.app(scope, limited, send)
        except _TooLarge:
            await _too_large(send)


class _TooLarge(Exception):
    pass


async def _too_large(send):
    await send({"type": "http.response.start", "status": 413, "headers": []})
    await send({"type": "http.response.body", "body": b"request too large"})


def labeling_app(
    session,
    table,
    classes,
    *,
    images=None,
    item_column=None,
    annotators=None,
    local=True,
    hosts=("127.0.0.1", "localhost"),
    repeat_share=0.0,
    stop=None,
    budget=None,
    batch=8,
):
    """The Starlette app of a labeling session.

    Parameters
    ----------
    session : LabelingSession
        Open, writable, of format 3, with an :class:`~skassess.ActiveAssessor`.
    table : ScoresTable
        The pool's rows (ids, scores, display columns).
    classes : list of str
        The class names, in score-column order.
    images : ItemImages, default=None
        The items' images, by id.
    item_column : str, default=None
        A display column shown as the item's text.
    annotators : list of str, default=None
        Who may label. With ``local=False``, each gets a link with a token
        (``app.state.links``); None on this machine: anyone who gives a
        name.
    local : bool, default=True
        Whether the server listens on this machine only.
    hosts : sequence of str
        The Host headers accepted (against DNS rebinding).
    repeat_share : float, default=0.0
        The share of the labels that are second labels (see
        :meth:`LabelingSession.next_item`).
    stop : StopRule, default=None
        Shown as met when it holds ("you can stop").
    budget : int, default=None
        No item is given once the session holds this many labels.
    batch : int, default=8
        The sampler's proposals among which the annotators' items are chosen
        (at least one more than the items held).

    Returns
    -------
    app : starlette.applications.Starlette
        Run it with any ASGI server (``uvicorn.run(app)``); ``app.state.links``
        maps each of ``annotators`` to its sign-in link (a path with a token).

    Raises
    ------
    ImportError
        Without Starlette (``pip install "skassess[web]"``).
    """
    try:
        from starlette.applications import Starlette
        from starlette.middleware import Middleware
        from starlette.middleware.base import BaseHTTPMiddleware
        from starlette.middleware.trustedhost import TrustedHostMiddleware
        from starlette.responses import FileResponse, HTMLResponse, RedirectResponse, Response
        from starlette.routing import Route
    except ImportError as exc:
        raise ImportError(
            'The labeling server needs Starlette and uvicorn: pip install "skassess[web]".'
        ) from exc
    state = session.server_state()
    lock = asyncio.Lock()
    declined = {}
    cache = {}
    version = [0]  # counts the session's changes (labels, skips, undos) by this server
    stop = stop if stop is not None else StopRule()

    def who(request):
        value = request.cookies.get(COOKIE, "")
        name, _, signature = value.rpartition("|")
        if not name or not state.verify(signature, "annotator", name):
            return None
        if annotators is not None and name not in annotators:
            return None
        return name

    def respond(request, html, status=200):
        nonce = request.state.nonce
        return HTMLResponse(html(nonce), status_code=status)

    def estimate():
        """The latest estimate computed: (answer, summary, labels behind it).

        Computed in a thread of its own from a snapshot of the session, so that
        the next item is shown as soon as a label is recorded; a page shows the
        estimate of the labels it was computed from.
        """
        due = time.monotonic() >= cache.get("next", 0.0)
        if cache.get("version") != version[0] and not cache.get("running") and due:
            cache["next"] = time.monotonic() + ESTIMATE_INTERVAL
            snapshot, at, labels = session.estimate_snapshot(), version[0], session.n_labeled
            cache["running"] = True

            def work():
                try:
                    summary = snapshot.summary()
                    cols = [c for c in ("n_labeled", "mean", "lower", "upper") if c in summary]
                    summary = summary[cols].copy()
                    if "n_labeled" in summary:
                        summary["n_labeled"] = summary["n_labeled"].round().astype(int)
                    cache.update(version=at, answer=snapshot.answer(), summary=summary)
                    cache["labels"] = labels
                except Exception as exc:  # shown on the page; the labeling goes on
                    text = f"The estimate could not be computed ({type(exc).__name__}: {exc})."
                    answer = {"text": text, "probability": None, "certified": None}
                    cache.update(answer=answer | {"max_width": float("nan")}, summary=None)
                    cache["labels"] = labels
                finally:
                    cache["running"] = False

            worker = threading.Thread(target=work, daemon=True)
            worker.start()
            if "answer" not in cache:  # the first page waits for it
                worker.join()
        return cache["answer"], cache["summary"], cache["labels"]

    def choose(annotator):
        """The annotator's item: the one held, else a new one (row, nonce, repeat) or None."""
        held = state.reserved.get(annotator)
        if held is not None:
            row, nonce, repeat = held
            done = session.has_label(row, annotator)
            if not done and (repeat or session.assessor_.labels_[row] < 0):
                return held
            state.release(annotator)
        if budget is not None and session.n_labeled >= budget:
            return None
        others = state.held_by_others(annotator) | declined.get(annotator, set())
        wants = session.n_repeats < repeat_share * (session.n_labeled + 1)
        if repeat_share > 0 and wants and session.annotated:
            try:
                candidates = session.assessor_.query_repeat(
                    min(batch + len(others), _repeatable(session, annotator)),
                    annotator=annotator,
                )
            except ValueError:
                candidates = []
            for row in candidates:
                if int(row) not in others:
                    return int(row), state.reserve(annotator, int(row), True), True
        for row in session.query_batch(max(batch, len(state.reserved) + 1)):
            if row not in others:
                return row, state.reserve(annotator, row, False), False
        return None

    def view(annotator, row, nonce, repeat):
        answer, summary, behind = estimate()
        scores = np.asarray(table.scores[row], dtype=float)
        probs = np.array([1 - scores, scores]) if scores.ndim == 0 else scores
        k = int(np.argmax(probs))
        item_id = str(table.ids[row])
        out = {
            "annotator": annotator,
            "id": item_id,
            "row": row,
            "csrf": state.sign("form", annotator, row, nonce),
            "classes": classes,
            "prediction": classes[k],
            "score": probs[k],
            "repeat": repeat,
            "labels": session.n_labeled,
            "budget": budget,
            "answer": answer["text"],
            "estimate_labels": behind,
            "stop": _stop_text(stop, answer),
            "summary": summary,
        }
        if images is not None:
            if images.path(item_id) is not None:
                out["image"] = f"/item/{row}"
            else:
                out["missing_image"] = True
        display = table.display
        if item_column is not None:
            out["text"] = str(display[item_column].iloc[row])
        record = [(c, display[c].iloc[row]) for c in display.columns if c != item_column]
        out["record"] = record
        return out

    async def home(request):
        annotator = who(request)
        if annotator is None:
            return _login(request)
        async with lock:
            chosen = choose(annotator)
            if chosen is None:
                answer, _, _ = estimate()
                why = (
                    "The budget is spent."
                    if budget is not None and session.n_labeled >= budget
                    else "No item is left for you to label."
                )
                return respond(
                    request,
                    lambda n: message_page("Nothing to label", f"{why} {answer['text']}", n),
                )
            page = view(annotator, *chosen)
        return respond(request, lambda n: label_page(n, page))

    def _login(request, error=None, status=200):
        pre = request.cookies.get("skassess_login") or secrets.token_hex(16)
        response = respond(
            request,
            lambda n: login_page(n, state.sign("login", pre), local=local, error=error),
            status,
        )
        response.set_cookie("skassess_login", pre, httponly=True, samesite="strict")
        return response

    def _signed_in(name):
        response = RedirectResponse("/", status_code=303)
        response.set_cookie(
            COOKIE,
            f"{name}|{state.sign('annotator', name)}",
            httponly=True,
            samesite="strict",
            max_age=30 * 24 * 3600,
        )
        return response

    async def login(request):
        if request.method == "GET":
            name = request.query_params.get("name", "")
            token = request.query_params.get("token", "")
            if annotators is not None and name in annotators and state.verify(token, "token", name):
                return _signed_in(name)
            return _login(request, "This link is not valid.", 403)
        if not local:
            return _login(request, "Open the link with your token.", 403)
        form = await request.form()
        pre = request.cookies.get("skassess_login", "")
        if not pre or not state.verify(form.get("csrf"), "login", pre):
            return _login(request, "The form expired; try again.", 403)
        name = str(form.get("name", "")).strip()
        if not _NAME.match(name):
            return _login(request, "A name is 1 to 200 characters, without < > \" ' &.", 400)
        if annotators is not None and name not in annotators:
            return _login(request, "This name is not one of the annotators.", 403)
        return _signed_in(name)

    async def act(request):
        annotator = who(request)
        if annotator is None:
            return RedirectResponse("/", status_code=303)
        form = await request.form()
        row_text = str(form.get("row", ""))
        if not row_text.isdigit() or int(row_text) >= len(table.ids):
            return respond(request, lambda n: message_page("Bad request", "No such item.", n), 400)
        row = int(row_text)
        action = request.url.path.strip("/")
        async with lock:
            held = state.reserved.get(annotator)
            if held is None or held[0] != row:
                if action == "label" and session.has_label(row, annotator):
                    return RedirectResponse("/", status_code=303)  # accepted once already
                return respond(
                    request,
                    lambda n: message_page(
                        "Not your item", "This item is no longer yours; here is the next.", n
                    ),
                    409,
                )
            if not state.verify(form.get("csrf"), "form", annotator, row, held[1]):
                return respond(
                    request, lambda n: message_page("Refused", "The form is not valid.", n), 403
                )
            if action == "label":
                code = str(form.get("label", ""))
                if not code.isdigit() or int(code) >= len(classes):
                    return respond(
                        request, lambda n: message_page("Bad request", "No such class.", n), 400
                    )
                session.tell(row, int(code), annotator=annotator)
                version[0] += 1
                state.release(annotator)
            elif action == "skip":
                if held[2] or session.assessor_.labels_[row] >= 0:
                    declined.setdefault(annotator, set()).add(row)
                else:
                    session.skip(row)
                    version[0] += 1
                state.release(annotator)
            else:  # undo: the session's last event, when it is this annotator's
                events = session.events()
                if len(events) == 0 or events["annotator"].iloc[-1] != annotator:
                    return respond(
                        request,
                        lambda n: message_page(
                            "Nothing to undo",
                            "Undo takes back the session's last label, and that is not yours.",
                            n,
                        ),
                        409,
                    )
                last = session.undo()
                version[0] += 1
                state.release(annotator)
                if last is not None and last["kind"] == "label":
                    # the undone item again, a second label where someone else labeled it
                    back = int(last["row"])
                    state.reserve(annotator, back, bool(session.assessor_.labels_[back] >= 0))
        return RedirectResponse("/", status_code=303)

    async def item(request):
        annotator = who(request)
        row_text = request.path_params["row"]
        if annotator is None or images is None or not row_text.isdigit():
            return Response("not found", status_code=404)
        row = int(row_text)
        held = state.reserved.get(annotator)
        if held is None or held[0] != row or row >= len(table.ids):
            return Response("not found", status_code=404)
        found = images.path(str(table.ids[row]))
        if found is None:
            return Response("not found", status_code=404)
        path, media = found
        return FileResponse(path, media_type=media, headers={"Cache-Control": "no-store"})

    async def review(request):
        annotator = who(request)
        if annotator is None:
            return _login(request)
        async with lock:
            notes = session.annotations()
            disagreements = []
            for row, group in notes.groupby("row", sort=True):
                if group["label"].nunique() > 1:
                    pairs = zip(group["annotator"], group["label"], strict=True)
                    labels = [f"{a}: {classes[int(k)]}" for a, k in pairs]
                    disagreements.append((str(table.ids[int(row)]), labels))
            estimator = session.assessor_.estimator_
            summary = (
                estimator.annotator_summary() if hasattr(estimator, "annotator_names_") else None
            )
        return respond(request, lambda n: review_page(n, disagreements, summary, classes))

    async def security_headers(request, call_next):
        request.state.nonce = secrets.token_urlsafe(16)
        response = await call_next(request)
        nonce = request.state.nonce
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; img-src 'self'; style-src 'nonce-{nonce}'; "
            f"script-src 'nonce-{nonce}'; form-action 'self'; frame-ancestors 'none'; "
            "base-uri 'none'"
        )
        response.headers["X-Content-Type-Options"] = "nosniff"
        response.headers["X-Frame-Options"] = "DENY"
        response.headers["Referrer-Policy"] = "no-referrer"
        return response

    app = Starlette(
        routes=[
            Route("/", home),
            Route("/login", login, methods=["GET", "POST"]),
            Route("/label", act, methods=["POST"]),
            Route("/skip", act, methods=["POST"]),
            Route("/undo", act, methods=["POST"]),
            Route("/item/{row}", item),
            Route("/review", review),
        ],
        middleware=[
            Middleware(_BodyLimit),
            Middleware(TrustedHostMiddleware, allowed_hosts=list(hosts)),
            Middleware(BaseHTTPMiddleware, dispatch=security_headers),
        ],
    )
    app.state.links = {
        name: f"/login?name={quote(name)}&token={state.sign('token', name)}"
        for name in (annotators or [])
    }
    return app


def _repeatable(session, annotator):
    """How many labeled rows ``annotator`` has not labeled (at least 1)."""
    notes = session.annotations()
    mine = set(notes.loc[notes["annotator"] == annotator, "row"])
    return max(1, len(set(notes["row"])) - len(mine))


def _stop_text(stop, answer):
    reason = stop(answer) if stop.active else None
    if reason is None:
        return ""
    return f"You can stop: {answer['text']}"
