"""Opening a file beneath a directory so that the file checked is the file opened.

``open_beneath(root, parts)`` walks ``parts`` from a descriptor of ``root`` one component at
a time, each opened relative to its parent's descriptor with ``O_NOFOLLOW``: the kernel never
follows a symlink, and what a step opened is never looked up by name again. A component that
is a symlink is read instead (``readlinkat``) and its target walked in its place: a relative
target from the link's directory, an absolute one from ``root``. ``..`` goes back up the
components walked so far. Where a target or a ``..`` leaves ``root``, its real path is found
by name (``realpath``: the old answer to "is it inside?") and, if inside, walked from
``root`` like the rest; otherwise the walk ends with ``FileNotFoundError``.

So whatever is renamed or swapped while a walk runs, each step opens something inside
``root`` relative to a directory inside ``root``: a symlink renamed over a checked file is
met by the walk as a symlink, never followed out. At most two descriptors are open at a
time, whatever the depth of the path; a walk follows at most 40 symlinks (the kernel's own
bound).
"""

from __future__ import annotations

import errno
import os
from collections.abc import Sequence

__all__ = ["open_beneath"]

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
#: A directory on the way: as a path only where the system can (it needs no read
#: permission, only search), never through a symlink.
_DIRECTORY = getattr(os, "O_PATH", os.O_RDONLY) | os.O_DIRECTORY | os.O_NOFOLLOW | _CLOEXEC
#: The last component: for reading, without blocking (a FIFO is not waited for).
_LEAF = os.O_RDONLY | os.O_NONBLOCK | _CLOEXEC
#: The errors an ``O_NOFOLLOW`` open gives for a symlink (ELOOP on Linux and macOS for the
#: last component, ENOTDIR with ``O_DIRECTORY``, EMLINK on FreeBSD).
_MAYBE_A_LINK = frozenset([errno.ELOOP, errno.ENOTDIR, errno.EMLINK])
_MAX_LINKS = 40


def open_beneath(root: str, parts: Sequence[str], *, follow_links: bool = False) -> int:
    """A descriptor of what ``parts`` (path components, no separators) name under ``root``
    (a real path: no symlink in it): a file opened for reading without blocking, or a
    directory (possibly opened as a path only: for ``fstat`` and as a ``dir_fd``). The caller
    closes it. ``FileNotFoundError`` when the path leads out of ``root``, another ``OSError``
    when a component is missing (or not a directory, or unreadable). With ``follow_links``
    every symlink is followed by the kernel, wherever it leads. Blocking: call it in a
    worker thread."""
    if follow_links:
        return os.open(os.path.join(root, *parts), _LEAF)
    return _Walk(root).open(parts)


class _Walk:
    """One walk from ``root``: the directory reached (``fd``) and its components under
    ``root`` (``names``), none of them a symlink or ``..``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.fd = os.open(root, _DIRECTORY)
        self.names: list[str] = []

    def open(self, parts: Sequence[str]) -> int:
        """The descriptor of what ``parts`` name (see ``open_beneath``). The walk's own
        descriptor is returned or closed."""
        pending = _stack(parts)
        links = 0
        try:
            while pending:
                name = pending.pop()
                if name == ".":
                    continue
                if name == ".." and self.names:
                    self._up()
                    continue
                if name == "..":  # above the root: allowed if the rest leads back in
                    rest = os.path.join(os.path.dirname(self.root), *reversed(pending))
                    pending = _stack(self._restart(rest))
                    continue
                flags = _LEAF | os.O_NOFOLLOW if not pending else _DIRECTORY
                try:
                    fd = os.open(name, flags, dir_fd=self.fd)
                except OSError as error:
                    if error.errno not in _MAYBE_A_LINK:
                        raise
                    target = _link_target(name, self.fd, error)
                    links += 1
                    if links > _MAX_LINKS:
                        raise OSError(errno.ELOOP, "too many levels of symlinks") from None
                    if os.path.isabs(target):
                        pending += _stack(self._restart(target))
                    else:
                        pending += _stack(target.split("/"))
                    continue
                os.close(self.fd)
                self.fd = fd
                self.names.append(name)
        except BaseException:
            os.close(self.fd)
            raise
        return self.fd

    def _up(self) -> None:
        """Back to the parent of the directory reached: reopened from ``root``, one
        component at a time, none followed."""
        names = self.names[:-1]
        self._reopen_root()
        for name in names:
            fd = os.open(name, _DIRECTORY, dir_fd=self.fd)
            os.close(self.fd)
            self.fd = fd
        self.names = names

    def _restart(self, path: str) -> list[str]:
        """Back to ``root`` for the absolute ``path`` (a symlink's target, or where ``..``
        above the root leads), which must lead inside it; returns the components of its real
        path under ``root``. (The real path is found by name, so the path may reach ``root``
        through other symlinks; the components are walked from ``root`` like the rest.)"""
        real = os.path.realpath(path)
        inside = self.root.rstrip(os.sep) + os.sep
        if real != self.root and not real.startswith(inside):
            raise FileNotFoundError(errno.ENOENT, "the path leads out of the directory")
        self._reopen_root()
        self.names = []
        return real[len(inside) :].split(os.sep)

    def _reopen_root(self) -> None:
        fd = os.open(self.root, _DIRECTORY)
        os.close(self.fd)
        self.fd = fd


def _stack(parts: Sequence[str]) -> list[str]:
    """``parts`` as a stack to pop from (the first last), an empty part as ``.`` (so that a
    trailing ``/`` still requires a directory before it)."""
    return [part or "." for part in reversed(parts)]


def _link_target(name: str, directory: int, error: OSError) -> str:
    """The target of the symlink ``name`` in ``directory``; ``error`` (from opening it) when
    it is not a symlink."""
    try:
        return os.readlink(name, dir_fd=directory)
    except OSError:
        raise error from None
