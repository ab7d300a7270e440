"""Dataset recipes and checksums, shipped inside the wheel as ``robustbnn.recipes``."""
