"""Plug-ins written as an outside package writes them; ``--plugin examples.<module>``."""
