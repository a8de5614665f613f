"""A campaign's own directory (`fuzz --out`, `sweep --out`): what may be written and deleted there.

Issue #42. A campaign directory is data people send each other, and `--out` may be any directory
a user names, so three rules hold for both commands:
- a directory name read from a campaign's files (state.json, finding.json, results.jsonl) is used
  only when it is one plain name (`plain_name`): never a path out of `--out`;
- a new campaign goes only into a missing or empty directory, or one that holds a campaign of the
  same tool (`check_out`); it deletes only what such a campaign writes;
- nothing in it is a symbolic link (`check_no_links`), so nothing written there lands elsewhere;
- one campaign at a time per directory: an exclusive `flock` on a lock file in it (`OutLock`),
  which the kernel releases when the process ends, however it ends.
Light at import (no numpy, no language): `sweep` and the CLI use it before anything heavy loads.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

#: The lock file a running campaign holds (`OutLock`); it stays, empty, after the campaign.
LOCK_FILE = ".advalidate.lock"
#: The longest directory name read from a campaign file.
MAX_NAME = 128
_PLAIN = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.+-]*", re.ASCII)


class OutDirError(Exception):
    """`--out` cannot hold this campaign, or a campaign file names a bad directory (exit status 2)."""


def plain_name(value: object, where: str) -> str:
    """`value` if it is one plain directory name (letters, digits, `_.+-`, not starting with a dot,
    no `..`, at most MAX_NAME characters), else `OutDirError` naming `where` it was read from."""
    if isinstance(value, str) and len(value) <= MAX_NAME and _PLAIN.fullmatch(value) and ".." not in value:
        return value
    shown = repr(value)[:80]
    raise OutDirError(
        f"{where}: {shown} is not a plain directory name (letters, digits and _.+- only, no path "
        f"separator or '..', at most {MAX_NAME} characters)"
    )


def check_out(out: Path, marker: str, tool: str) -> bool:
    """Whether `out` (the `--out` of a new campaign of `tool`) holds an earlier campaign, which
    `marker` (its state file) shows; False when it is missing or empty. `OutDirError` when it is not
    a directory, or holds anything else: nothing there is touched."""
    if not out.exists() and not out.is_symlink():
        return False
    if not out.is_dir():
        raise OutDirError(f"--out {out}: not a directory")
    try:
        entries = {p.name for p in out.iterdir()}
    except OSError as exc:
        raise OutDirError(f"--out {out}: cannot list it: {exc.strerror or exc}") from None
    entries.discard(LOCK_FILE)
    if not entries:
        return False
    if marker in entries:
        return True
    raise OutDirError(
        f"--out {out}: not empty and not a {tool} campaign directory (no {marker}); "
        "give a new or empty directory (nothing there was changed)"
    )


def check_no_links(out: Path, depth: int = 2) -> None:
    """`OutDirError` when `out` holds a symbolic link within `depth` levels (where a campaign writes:
    its files, its finding and incident directories and their files). A campaign directory someone
    sent could otherwise point `incidents/` or a finding's directory anywhere, and the campaign
    would write there."""
    level = [out]
    for _ in range(depth):
        below = []
        for d in level:
            try:
                entries = list(os.scandir(d))
            except OSError as exc:
                raise OutDirError(f"--out {out}: cannot list {d}: {exc.strerror or exc}") from None
            for e in entries:
                if e.is_symlink():
                    raise OutDirError(
                        f"--out {out}: {e.path} is a symbolic link; a campaign directory holds none "
                        "(a campaign would write where it points)"
                    )
                if e.is_dir(follow_symlinks=False):
                    below.append(Path(e.path))
        level = below


class OutLock:
    """An exclusive lock on a campaign directory for as long as a campaign runs in it."""

    def __init__(self, out: Path, tool: str) -> None:
        self.path = out / LOCK_FILE
        self.tool = tool
        self.fd: int | None = None

    def acquire(self) -> None:
        """Take the lock or raise `OutDirError` at once (never wait: the other campaign may run for hours)."""
        import fcntl

        try:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC | os.O_NOFOLLOW, 0o644)
        except OSError as exc:
            raise OutDirError(f"{self.path}: cannot open the lock file: {exc.strerror or exc}") from None
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            os.close(fd)
            raise OutDirError(
                f"--out {self.path.parent}: another {self.tool} campaign is running in this directory "
                "(it holds its lock); wait for it to end, or give another --out"
            ) from None
        self.fd = fd

    def release(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None
