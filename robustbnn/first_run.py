"""Other libraries' first-run chatter, kept off the user's stderr.

On a fresh home folder matplotlib scans the system fonts once and caches the list. When that
scan takes more than 5 s (a slow or busy machine) it logs ``Matplotlib is building the font
cache; this may take a moment.`` at WARNING, from a timer thread, to whatever handler the
program has: in the CLI that is stderr, before the line that matters (issue 47). Whether a user
sees it depended on the machine's load. :func:`quiet_first_run` replaces that record with one
line of robustbnn's own, at INFO on the ``robustbnn`` logger, which the CLI shows as progress
(and ``--quiet`` hides) and a Python program sees only if it enabled robustbnn's INFO logging.

It is installed when the package is imported (``robustbnn/__init__.py``), so every process
(the CLI, a pool worker, a Python program) has it before anything imports matplotlib. It needs
only :mod:`logging`: matplotlib is not imported here. Other notices of that logger pass as they
are.
"""

from __future__ import annotations

import logging

__all__ = ["FONT_CACHE_NOTICE", "OWN_LINE", "quiet_first_run"]

# The start of matplotlib's message (matplotlib/font_manager.py, FontManager.__init__).
FONT_CACHE_NOTICE = "Matplotlib is building the font cache"
# What robustbnn says instead.
OWN_LINE = ("building matplotlib's list of system fonts, once on this machine "
            "(it can take a minute on a slow one)")

log = logging.getLogger("robustbnn")


class _FontCacheNotice(logging.Filter):
    """Drops matplotlib's font-cache notice and logs :data:`OWN_LINE` in its place."""

    def filter(self, record: logging.LogRecord) -> bool:
        if str(record.msg).startswith(FONT_CACHE_NOTICE):
            log.info(OWN_LINE)
            return False
        return True


def quiet_first_run() -> None:
    """Install the filter on matplotlib's font-manager logger (idempotent)."""
    logger = logging.getLogger("matplotlib.font_manager")
    if not any(isinstance(f, _FontCacheNotice) for f in logger.filters):
        logger.addFilter(_FontCacheNotice())
