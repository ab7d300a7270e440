"""A machine too slow for matplotlib's 5-second patience, made on purpose (issue 47).

Put this folder on ``PYTHONPATH`` and every Python process started with it fires
matplotlib's font-cache timer at once, in the thread that started it, as if scanning the system
fonts had taken longer than 5 s: the notice "Matplotlib is building the font cache; this may
take a moment." is logged whenever the font list is built (a fresh home), whatever the load.
Other timers run as usual. Used by tests/test_fresh_machine.py and tests/test_first_run.py.
"""

import threading

_Timer = threading.Timer


class _SlowFontScan(_Timer):
    def start(self) -> None:
        if getattr(self.function, "__module__", "") == "matplotlib.font_manager":
            self.function(*self.args, **self.kwargs)
            return
        super().start()


threading.Timer = _SlowFontScan
