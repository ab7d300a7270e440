"""The render manifest: the files a render wrote into a folder, so the next one removes only
those it no longer writes.

``out_dir/.robustbnn-render.json`` lists paths relative to the folder. Whatever a manifest
says, only names a render can write count (:func:`is_ours`): the leaderboards, the detail
tables and ``figures/*.png`` with their ``.svg`` twins; a forged entry (``../x``,
``results.jsonl``) is ignored.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path, PurePosixPath

__all__ = ["MANIFEST", "OURS", "is_ours", "read_manifest"]

logger = logging.getLogger(__name__)

MANIFEST = ".robustbnn-render.json"
# What a render can write: only such files are ever removed, whatever a manifest says.
OURS = frozenset({"leaderboard.md", "leaderboard.csv", "leaderboard.json", "leaderboard.html",
                  "ood.md", "ood.csv", "attack.md", "shift.md", "fidelity.md", "all_columns.csv",
                  "all_columns.json", "all_columns_seeds.json",
                  # the aspect tables (robustbnn.report.aspects)
                  *(f"table_{aspect}.{ext}" for aspect in ("attacks", "robustness", "ood",
                                                           "shift", "fidelity", "sanity")
                    for ext in ("md", "csv"))})


def is_ours(entry: object) -> bool:
    """Whether a manifest entry names a file a render writes (a path relative to the folder)."""
    if not isinstance(entry, str):
        return False
    path = PurePosixPath(entry)
    if entry in OURS:
        return True
    return (len(path.parts) == 2 and path.parts[0] == "figures"
            and path.suffix in (".png", ".svg")
            and path.name not in (".", "..") and "\\" not in entry)


def read_manifest(out_dir: Path, *, quiet: bool = False) -> list[str]:
    """The files the previous render wrote (none when there is no readable manifest)."""
    path = Path(out_dir) / MANIFEST
    try:
        files = json.loads(path.read_text(encoding="utf-8"))["files"]
    except FileNotFoundError:
        return []
    except (OSError, ValueError, KeyError, TypeError, UnicodeDecodeError) as err:
        if not quiet:
            logger.warning("%s is unreadable (%s); no earlier report is removed", path, err)
        return []
    if not isinstance(files, list):
        if not quiet:
            logger.warning("%s lists no files; no earlier report is removed", path)
        return []
    return [f for f in files if is_ours(f)]
