"""``skassess serve``: a labeling session in the browser, several annotators at once."""

import ipaddress
from pathlib import Path

from ..exceptions import SessionError
from ..samplers import ActiveAssessor, StopRule
from ..session import ItemImages, labeling_app
from ._label import needs_group_task, open_session, prepare


def _check_serve_flags(args, fixed):
    needs_group_task(fixed, "serve")
    if not 0 <= args.repeat_share < 1:
        raise ValueError(f"--repeat-share must be in [0, 1); got {args.repeat_share}.")
    if args.items is not None and not Path(args.items).is_dir():
        raise ValueError(f"--items {args.items}: not a folder.")
    if not is_local(args.host) and not args.annotators:
        raise ValueError(
            f"--host {args.host} listens beyond this machine: name the annotators "
            "(--annotators NAME ...), who each get a link with a token."
        )
    if not 0 < args.port < 65536:
        raise ValueError(f"--port must be in 1..65535; got {args.port}.")


def is_local(host):
    """Whether ``host`` is a loopback address (or ``localhost``)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def build(args):
    """The app, its session (open) and the URLs to print; the session is closed by the caller."""
    path = Path(args.session)
    sf, table, group, assessor, info, fixed = prepare(args, path, _check_serve_flags)
    if args.item_column is not None and args.item_column not in table.display.columns:
        raise ValueError(
            f"--item-column {args.item_column!r} is not a --display column of the scores "
            f"file; add --display {args.item_column}."
        )
    if (table.labels >= 0).any():
        raise ValueError(
            f"{args.scores[0]}: the file labels {int((table.labels >= 0).sum()):,} rows "
            "without an annotator; serve's labels each name their annotator, so the "
            "scores file must label none (leave its label column out: --label-column '')."
        )
    session = open_session(path, sf, table, group, assessor, info, fixed)
    try:
        if not isinstance(session.assessor_, ActiveAssessor):
            raise ValueError("serve labels with an ActiveAssessor (a group task).")
        if session.n_labeled and not session.annotated:
            raise SessionError(
                f"{path}: the session's labels name no annotator; serve's labels do. Start "
                "a new session file for serve."
            )
        app = labeling_app(
            session,
            table,
            list(sf.classes),
            images=None if args.items is None else ItemImages(args.items),
            item_column=args.item_column,
            annotators=args.annotators,
            local=is_local(args.host),
            hosts=_hosts(args.host),
            repeat_share=args.repeat_share,
            stop=StopRule(probability=args.stop_probability, width=args.stop_width),
            budget=args.budget,
        )
    except BaseException:
        session.close()
        raise
    return app, session


def _hosts(host):
    """The Host headers to accept for a server on ``host``."""
    if is_local(host):
        return ["127.0.0.1", "localhost", "[::1]"]
    return [host] if host not in ("0.0.0.0", "::") else ["*"]


def run(args):
    import uvicorn

    app, session = build(args)
    shown = "127.0.0.1" if args.host in ("0.0.0.0", "::") else args.host
    base = f"http://{shown}:{args.port}"
    try:
        print(f"Session {args.session}: {session.n_labeled} labels so far.")
        if app.state.links:
            print("Each annotator's link (keep them private):")
            for name, link in app.state.links.items():
                print(f"  {name}: {base}{link}")
        else:
            print(f"Open {base}/ in a browser; each annotator gives a name.")
        print("Stop the server with Ctrl-C; every label is saved as it is given.", flush=True)
        uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    finally:
        session.close()
    return 0
