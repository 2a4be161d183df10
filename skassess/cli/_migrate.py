"""``skassess migrate``: convert an older session file (format 1 or 2) to the current format."""

from ..session import migrate_session


def run(args):
    backup = migrate_session(args.session, trust_pickle=args.trust_pickle)
    print(f"converted {args.session} to the current format; the old file is {backup}")
    return 0
