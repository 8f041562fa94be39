"""numba solvers of cohstats (coordinate descent, SVM duals, trees).

Importing this package first routes numba's on-disk cache of cohstats to a folder keyed by a
hash of the jitted sources (see :mod:`cohstats._numba_cache`).
"""

from cohstats._numba_cache import install as _install_numba_cache

_install_numba_cache()
