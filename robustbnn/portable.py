"""Paths a run records, kept free of the machine it ran on.

A run folder records its command line (``run.json``'s ``argv``, a reproduction's
``Command:``) and its data's source. Paths in them are written relative to the current folder
when they lie under it (:func:`relative_argv`), and site-packages as ``<site-packages>``
(:func:`portable_text`), so a run made inside the project records no absolute path. What
remains absolute (an ``--out`` in ``/tmp``, a data root elsewhere) stays in the user's own run
folder. The committed copies under ``reports/`` are scrubbed by ``.ci/reports refresh`` and
``.ci/reproductions refresh`` with this module's command line, which replaces the given
folders by placeholders and fails, naming file and line, if any machine path remains::

    python -m robustbnn.portable reports --replace /tmp/tmp.X/run=reports
"""

from __future__ import annotations

import argparse
import os
import re
import site
import sys
import sysconfig
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

__all__ = ["find_machine_paths", "machine_roots", "portable_text", "relative_argv", "scrub"]

# Absolute paths that name one machine: its users' homes, scratch and work folders. A match must
# start a path (not follow a word, a dot or a slash, as in a URL's "github.com/root/x").
_START = r"(?<![\w./~\\-])"
_GENERIC = (r"/work/", r"/home/[^/\s]+/", r"/Users/[^/\s]+/", r"/tmp/", r"/root/",
            r"/private/var/folders/", r"[A-Za-z]:[\\/]+Users[\\/]")


# Folders every machine has: as a parent of the project they name no machine.
_SYSTEM = {"/", "/usr", "/opt", "/var", "/srv", "/mnt", "/media", "/home", "/Users", "/private"}


def machine_roots(project: str | Path | None = None) -> list[str]:
    """This machine's own folders: home, the project and its parent, the temp dir.

    Args:
        project: The project's folder (default: the current folder).

    Returns:
        The folders, without the system ones (``/``, ``/usr``, ``/home``, ...).
    """
    here = Path(project if project is not None else Path.cwd()).resolve()
    roots = {str(Path.home()), str(here), str(here.parent), tempfile.gettempdir()}
    return sorted(r for r in roots if r not in _SYSTEM and Path(r).anchor != r)


def _pattern(roots: Iterable[str]) -> re.Pattern[str]:
    own = [re.escape(r.rstrip("/\\")) + r"(?![\w.-])" for r in roots]
    return re.compile(_START + "(?:" + "|".join([*_GENERIC, *own]) + ")", re.IGNORECASE)


def find_machine_paths(text: str, roots: Iterable[str] | None = None) -> list[tuple[int, str]]:
    """Lines of ``text`` that hold an absolute path of a machine.

    Args:
        text: The text to search.
        roots: This machine's folders (default :func:`machine_roots`), besides the generic
            prefixes ``/work/``, ``/home/<x>/``, ``/Users/<x>/``, ``/tmp/``, ``/root/`` and
            ``C:\\Users``.

    Returns:
        ``(line number, line)`` pairs, numbered from 1.

    Example:
        >>> find_machine_paths("ok: runs/x\\n--out /tmp/run\\nhttps://github.com/root/x", ())
        [(2, '--out /tmp/run')]
    """
    pattern = _pattern(machine_roots() if roots is None else roots)
    return [(i, line) for i, line in enumerate(text.splitlines(), 1) if pattern.search(line)]


def _is_path(token: str) -> bool:
    return os.path.isabs(token) or token.startswith("~")


def relative_argv(argv: Sequence[str], base: str | Path | None = None) -> list[str]:
    """``argv`` with every absolute path under ``base`` made relative to it.

    A token is a path on its own (``/a/b``) or after ``=`` (``--out=/a/b``); paths outside
    ``base`` are kept as they are.

    Args:
        argv: The command line, without the program name.
        base: The folder to make paths relative to (default: the current folder).

    Returns:
        The command line to record.

    Example:
        >>> relative_argv(["--out", "/w/p/runs/a", "--x=/w/p", "/elsewhere"], "/w/p")
        ['--out', 'runs/a', '--x=.', '/elsewhere']
    """
    root = Path(base if base is not None else Path.cwd()).resolve()

    def one(token: str) -> str:
        if not _is_path(token):
            return token
        path = Path(token).expanduser()
        resolved = path.resolve() if path.is_absolute() else path
        inside = resolved == root or root in resolved.parents
        return os.path.relpath(resolved, root) if inside else token

    out = []
    for token in argv:
        flag, eq, value = token.partition("=")
        out.append(f"{flag}={one(value)}" if eq and flag.startswith("-") else one(token))
    return out


def _site_dirs() -> list[str]:
    dirs = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"],
            *site.getsitepackages(), site.getusersitepackages()}
    return sorted((d for d in dirs if d), key=len, reverse=True)


def portable_text(text: str, replacements: dict[str, str] | None = None) -> str:
    """``text`` with each folder of ``replacements`` replaced by its placeholder.

    Args:
        text: A recorded string, such as a data set's source.
        replacements: Folder → placeholder (default: every site-packages folder →
            ``<site-packages>``). Longer folders are replaced first.

    Returns:
        The text to record.

    Example:
        >>> portable_text("csv (/v/lib/site-packages/m/a.gz)", {"/v/lib/site-packages": "<sp>"})
        'csv (<sp>/m/a.gz)'
    """
    if replacements is None:
        replacements = dict.fromkeys(_site_dirs(), "<site-packages>")
    for old in sorted(replacements, key=len, reverse=True):
        if old:
            text = text.replace(old, replacements[old])
    return text


def _text_files(where: Path) -> Iterator[tuple[Path, str]]:
    """The UTF-8 text files of a folder (or the file itself), binary ones skipped."""
    files = [where] if where.is_file() else sorted(p for p in where.rglob("*") if p.is_file())
    for path in files:
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue
        try:
            yield path, data.decode("utf-8")
        except UnicodeDecodeError:
            continue


def scrub(folder: str | Path, replacements: dict[str, str]) -> list[str]:
    """Replace folders by placeholders in every text file under ``folder``; report the rest.

    Args:
        folder: A folder of committed reports, or one file.
        replacements: Folder → what to write instead (a relative path or a placeholder such as
            ``<data>``), applied with the site-packages folders (→ ``<site-packages>``) and the
            current folder (→ relative).

    Returns:
        ``file:line: text`` of each line that still holds a machine path (none: clean).
    """
    here = str(Path.cwd().resolve())
    table = {**dict.fromkeys(_site_dirs(), "<site-packages>"), here + "/": "",
             **replacements}
    left = []
    for path, text in _text_files(Path(folder)):
        new = portable_text(text, table)
        if new != text:
            path.write_text(new, encoding="utf-8")
        left += [f"{path}:{n}: {line.strip()}" for n, line in find_machine_paths(new)]
    return left


def main(argv: list[str] | None = None) -> int:
    """``python -m robustbnn.portable PATH... [--replace OLD=NEW]...``: scrub each folder or
    file; exit 1, naming file and line, if a machine path remains."""
    parser = argparse.ArgumentParser(prog="python -m robustbnn.portable",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("folders", nargs="+", type=Path, metavar="PATH")
    parser.add_argument("--replace", action="append", default=[], metavar="OLD=NEW",
                        help="write NEW for the folder OLD (repeatable)")
    args = parser.parse_args(argv)
    pairs = [r.partition("=") for r in args.replace]
    if any(not eq or not old for old, eq, _ in pairs):
        parser.error("--replace takes OLD=NEW")
    table = {old: new for old, _, new in pairs}
    left = [line for folder in args.folders for line in scrub(folder, table)]
    for line in left:
        sys.stderr.write(f"machine path left: {line}\n")
    return 1 if left else 0


if __name__ == "__main__":
    sys.exit(main())
