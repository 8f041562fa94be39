"""Low-rank kernel feature maps: a kernel machine on n points as a linear model on n x r features.

A kernel fit needs the n x n kernel matrix: 8 n^2 bytes (20 GB at n = 50 000). A feature map
``Phi: R^p -> R^r`` with ``Phi(x)'Phi(x') ~ k(x, x')`` turns the kernel problem into a linear
one on ``Phi(X)``, fitted in O(n r) memory by the coordinate-descent engine (``clearn``,
``lum``) or by dual coordinate descent for the C-SVM (``svm``,
:mod:`cohstats.solvers.svm.linear`):

* **Nystroem** (Williams & Seeger 2001): ``r`` landmark rows ``L`` drawn at random from the
  training inputs, ``Phi(x) = k(x, L) K_LL^{-1/2}`` (pseudo-inverse square root, eigenvalues
  below ``1e-12`` times the largest dropped). ``Phi(X) Phi(X)' = K_XL K_LL^+ K_LX``: exact when
  the landmarks are all the training rows, and data-adaptive otherwise. Any kernel.
* **Random Fourier features** (Rahimi & Recht 2007), Gaussian kernel only:
  ``Phi(x) = sqrt(2/r) cos(W x + b)`` with the rows of ``W`` drawn from ``N(0, 2 gamma I)`` and
  ``b`` uniform on ``[0, 2 pi)``, so that ``E Phi(x)'Phi(x') = exp(-gamma ||x - x'||^2)``.

For a ridge-type penalty the two problems coincide: with ``f = Phi w`` and
``Phi Phi' = K`` the penalty ``||w||^2`` equals ``beta'K beta`` at ``w = Phi'beta``, and any
part of ``w`` outside the row space of ``Phi'`` only adds penalty. Nystroem is the default
(for the same r it approximates the kernel better on data with structure; see
``benchmarks/bench_kernel_approx.py``).

Examples
--------
>>> import numpy as np
>>> from cohstats.kernels import make_kernel
>>> X = np.random.default_rng(0).normal(size=(50, 3))
>>> k = make_kernel("rbf", X, gamma=0.5)
>>> fm = feature_map("nystroem", k, X, n_components=50, random_state=0)
>>> Phi = fm(X)
>>> bool(np.allclose(Phi @ Phi.T, k(X), atol=1e-8))      # all rows as landmarks: exact
True
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .kernels import KERNEL_RBF, Kernel

__all__ = ["FeatureMap", "feature_map", "APPROXIMATIONS"]

APPROXIMATIONS = ("nystroem", "rff")
_BLOCK = 4096  # rows per block when mapping: the map's own memory stays O(block x r)


@dataclass
class FeatureMap:
    """A fitted feature map; call it on inputs (already scaled like the training inputs)."""

    kind: str
    kernel: Kernel
    n_components: int
    landmarks: np.ndarray | None = None  # Nystroem: (r, p)
    normalization: np.ndarray | None = None  # Nystroem: (r, r') = K_LL^{-1/2}
    W: np.ndarray | None = None  # rff: (p, r)
    b: np.ndarray | None = None  # rff: (r,)

    @property
    def dim(self) -> int:
        """Number of features ``r'`` (Nystroem drops directions of a singular ``K_LL``)."""
        if self.kind == "nystroem":
            return int(self.normalization.shape[1])
        return int(self.W.shape[1])

    def __call__(self, X) -> np.ndarray:
        X = np.ascontiguousarray(X, dtype=np.float64)
        out = np.empty((X.shape[0], self.dim))
        for a in range(0, X.shape[0], _BLOCK):
            Xb = X[a : a + _BLOCK]
            if self.kind == "nystroem":
                out[a : a + _BLOCK] = self.kernel(Xb, self.landmarks) @ self.normalization
            else:
                Z = Xb @ self.W
                Z += self.b
                np.cos(Z, out=Z)
                out[a : a + _BLOCK] = math.sqrt(2.0 / self.W.shape[1]) * Z
        return out

    def describe(self) -> str:
        return f"{self.kind} approximation of {self.kernel.describe()}, {self.dim} features"


def feature_map(kind: str, kernel: Kernel, X, n_components: int = 300, random_state=0) -> FeatureMap:
    """Fit a low-rank feature map of ``kernel`` on the training inputs ``X``.

    Parameters
    ----------
    kind : ``"nystroem"`` or ``"rff"`` (random Fourier features, Gaussian kernel only).
    kernel : a resolved :class:`cohstats.kernels.Kernel`.
    X : (n, p) training inputs (scaled as the fit scales them).
    n_components : r, the number of landmarks or random features (Nystroem: at most n).
    random_state : seed of the landmark sample / the random frequencies.
    """
    if kind not in APPROXIMATIONS:
        raise ValueError(f"kernel_approx must be one of {APPROXIMATIONS} or None; got {kind!r}")
    if isinstance(n_components, bool) or not isinstance(n_components, (int, np.integer)) or n_components < 1:
        raise ValueError(f"n_components must be a positive integer; got {n_components!r}")
    X = np.ascontiguousarray(X, dtype=np.float64)
    n, p = X.shape
    rng = np.random.default_rng(random_state)
    if kind == "rff":
        if kernel.code != KERNEL_RBF:
            raise ValueError(
                f"kernel_approx='rff' approximates the Gaussian kernel only; got "
                f"{kernel.describe()} (use kernel_approx='nystroem')"
            )
        gamma = float(kernel.kpar[0])
        W = rng.normal(scale=math.sqrt(2.0 * gamma), size=(p, int(n_components)))
        b = rng.uniform(0.0, 2.0 * math.pi, size=int(n_components))
        return FeatureMap("rff", kernel, int(n_components), W=W, b=b)
    r = int(min(n_components, n))
    idx = np.sort(rng.choice(n, size=r, replace=False)) if r < n else np.arange(n)
    L = X[idx].copy()
    Kll = kernel(L, L)
    Kll = 0.5 * (Kll + Kll.T)
    s, U = np.linalg.eigh(Kll)
    keep = s > 1e-12 * max(float(s.max()), np.finfo(float).tiny)
    if not keep.any():
        raise ValueError("the kernel matrix of the landmarks is zero; check the kernel width")
    norm = U[:, keep] / np.sqrt(s[keep])[None, :]
    return FeatureMap("nystroem", kernel, int(n_components), landmarks=L, normalization=norm)
