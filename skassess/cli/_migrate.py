"""``skassess migrate``: convert an old (format 1) session file into the data-only format."""

from ..session import migrate_session


def add_parser(sub):
    p = sub.add_parser(
        "migrate",
        help="convert a format-1 session file (it held a pickle) to the current format",
        description="Session files of format 1 stored the assessor as a Python pickle, which "
        "runs code when loaded, so skassess refuses to open them. If you made the file "
        "yourself, this converts it once (the old file is kept as SESSION.format1). Never "
        "convert a session file you received from someone else.",
    )
    p.add_argument("session", metavar="SESSION", help="the format-1 session file")
    p.add_argument(
        "--trust-pickle",
        action="store_true",
        help="required: you vouch that the file is yours and safe to load",
    )
    p.set_defaults(func=run)


def run(args):
    backup = migrate_session(args.session, trust_pickle=args.trust_pickle)
    print(f"converted {args.session} to the current format; the old file is {backup}")
    return 0
