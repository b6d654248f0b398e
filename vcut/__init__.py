"""vcut: weighted balanced vertex-cut partitioning of (IR) graphs.

This package also hosts the ``vcut`` command line (`vcut.cli`).
"""
