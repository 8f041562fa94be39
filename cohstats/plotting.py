"""Shared matplotlib figures: loss functions of the papers and reliability diagrams.

* :func:`plot_coherence_losses` — [ZDJ] Figure 1 (coherence functions, C-loss and the usual
  majorizations of the 0-1 loss).
* :func:`plot_lum_losses` — [LZW] Figure 1 (LUM losses for several ``a`` and ``c``) and
  :func:`plot_lum_hybrid` — [LZW] Figure 2 (the ``a -> inf, c = 0`` hybrid against hinge,
  exponential and logistic losses).
* :func:`plot_lum_minimizer` — [LZW] Figure 3 (population minimizer ``f*`` against ``p``).
* :func:`plot_path` — glmnet-style coefficient paths (``PathFrame.plot``, ``fit.plot()``): the
  largest curves labelled at the right edge, no legend over the curves.
* :func:`calibration_table` / :func:`plot_calibration` — re-exported from
  :mod:`cohstats.calibration`, where calibration of fitted models lives
  (:func:`cohstats.calibration.calibration`, ``fit.calibration(newdata)``).

Loss values come from the single numba definition in :mod:`cohstats.losses.scalar`.
Every function returns the matplotlib ``Figure``; nothing is shown or saved.
"""

from __future__ import annotations

import math
from typing import Sequence

import numpy as np

from .calibration import calibration_table, plot_calibration  # noqa: F401  (moved; re-exported)

__all__ = [
    "plot_path",
    "loss_curve",
    "normalized_coherence",
    "lum_minimizer",
    "plot_coherence_losses",
    "plot_lum_losses",
    "plot_lum_hybrid",
    "plot_lum_minimizer",
    "calibration_table",
    "plot_calibration",
]


def _plt():
    # imported lazily: matplotlib picks a non-interactive backend by itself when headless
    import matplotlib.pyplot as plt

    return plt


def loss_curve(loss: str, z, p1: float = math.nan, p2: float = math.nan) -> np.ndarray:
    """Values of a binary margin loss on a grid of margins ``z`` (via ``losses.scalar``).

    Parameters
    ----------
    loss : str
        A key of ``cohstats.losses.scalar.LOSS_CODES`` ("C", "V", "lum", "hinge", "sqhinge",
        "exp", "logistic", "hhinge").
    z : array_like
        Margins ``y f(x)``.
    p1, p2 : float
        Loss parameters (``rho, u`` for "C"/"V"; ``a, c`` for "lum"; ``delta`` for "hhinge").

    Examples
    --------
    >>> loss_curve("hinge", [-1.0, 0.0, 2.0]).tolist()
    [2.0, 1.0, 0.0]
    """
    from cohstats.losses import scalar

    if loss not in scalar.LOSS_CODES:
        raise ValueError(f"unknown loss {loss!r}; available: {sorted(scalar.LOSS_CODES)}")
    code = scalar.LOSS_CODES[loss]
    zz = np.asarray(z, dtype=float)
    return np.array([scalar.loss_value(code, float(t), float(p1), float(p2)) for t in zz.ravel()]).reshape(zz.shape)


def normalized_coherence(z, rho: float, u: float) -> np.ndarray:
    """[ZDJ]'s ``L_{rho,u}(z) = V_{rho,u}(z) / V_{rho,u}(0)`` (``cohstats.losses.coherence_L``).

    A majorization of the 0-1 loss with ``L(0) = 1``; ``L_{rho,1} = C_{rho,1}`` and ``L_{1,0}``
    is the logit loss in base 2.

    Examples
    --------
    >>> normalized_coherence([0.0], 1.0, 0.0).tolist()
    [1.0]
    """
    from cohstats.losses import coherence_L

    return np.asarray(coherence_L(np.asarray(z, dtype=float), rho, u), dtype=float)


def lum_minimizer(p, a: float, c: float) -> np.ndarray:
    """Population minimizer ``f*(p)`` of the LUM loss ([LZW] Proposition 1).

    Delegates to ``cohstats.losses.lum_minimizer``: ``f* = (a R - a + c)/(1 + c)`` for
    ``p > 1/2`` and ``-(a/R - a + c)/(1 + c)`` for ``p < 1/2`` with ``R = (p/(1-p))^(1/(a+1))``;
    ``c = inf`` gives ``sign(p - 1/2)``; at ``p = 1/2`` the value 0 (any value in
    ``[-c/(1+c), c/(1+c)]`` minimizes).

    Examples
    --------
    >>> lum_minimizer([0.25, 0.5, 0.75], a=1.0, c=0.0).round(4).tolist()
    [-0.7321, 0.0, 0.7321]
    """
    from cohstats.losses import lum_minimizer as _lum_minimizer

    return np.asarray(_lum_minimizer(np.asarray(p, dtype=float), a, c), dtype=float)


def _zgrid(lo=-2.0, hi=3.0, n=501):
    return np.linspace(lo, hi, n)


def plot_coherence_losses(z: Sequence[float] | None = None):
    """[ZDJ] Figure 1: (a) ``V_{rho,1}``, (b) C-loss and other majorizations, (c) ``C_{rho,1}``,
    (d) ``L_{1,u}`` (see :func:`normalized_coherence`), all against the 0-1 loss.

    Examples
    --------
    >>> fig = plot_coherence_losses()
    >>> len(fig.axes)
    4
    """
    plt = _plt()
    z = _zgrid() if z is None else np.asarray(z, float)
    fig, axs = plt.subplots(2, 2, figsize=(10, 8), sharex=True)
    zero_one = (z <= 0).astype(float)

    def base(ax, title):
        ax.step(z, zero_one, where="post", color="0.5", lw=1, ls=":", label="0-1 loss")
        ax.set_title(title)
        ax.set_xlabel("z = y f(x)")
        ax.axvline(0, color="0.85", lw=0.8)

    ax = axs[0, 0]
    base(ax, r"(a) coherence $V_{\rho,1}(z)$")
    for rho in (0.01, 0.1, 1, 2):
        ax.plot(z, loss_curve("V", z, rho, 1.0), label=rf"$\rho={rho}$")
    ax.plot(z, loss_curve("hinge", z), "k--", lw=1, label="hinge")
    ax = axs[0, 1]
    base(ax, "(b) majorizations of the 0-1 loss")
    ax.plot(z, loss_curve("C", z, 1.0, 1.0), label=r"C-loss $C_{1,1}$")
    ax.plot(z, normalized_coherence(z, 1.0, 0.0), label=r"logit $L_{1,0}$")
    ax.plot(z, np.exp(-z / 2), label=r"exponential $e^{-z/2}$")
    ax.plot(z, loss_curve("hinge", z), label="hinge")
    ax.plot(z, loss_curve("sqhinge", z), label="squared hinge")
    ax.set_ylim(0, 4)
    ax = axs[1, 0]
    base(ax, r"(c) C-loss $C_{\rho,1}(z)$")
    for rho in (0.1, 1, 10, 100):
        ax.plot(z, loss_curve("C", z, rho, 1.0), label=rf"$\rho={rho}$")
    ax.plot(z, loss_curve("hinge", z), "k--", lw=1, label="hinge")
    ax = axs[1, 1]
    base(ax, r"(d) $L_{1,u}(z) = V_{1,u}(z) / V_{1,u}(0)$")
    for u in (0, 0.1, 1, 10):
        ax.plot(z, normalized_coherence(z, 1.0, u), label=f"u={u}")
    ax.plot(z, loss_curve("hinge", z), "k--", lw=1, label="hinge")
    for ax in axs.flat:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_lum_losses(
    z: Sequence[float] | None = None,
    a_values=(1, 10, 100),
    c_values=(0, 1, 10, math.inf),
    fixed_a: float = 1.0,
    fixed_c: float = 1.0,
):
    """[LZW] Figure 1: LUM losses ``V_{a,c}``; left panel varies ``c`` (``a`` fixed), right varies ``a``.

    ``c = inf`` is the hinge loss (SVM); ``a = 1, c = 1`` is DWD.

    Examples
    --------
    >>> len(plot_lum_losses().axes)
    2
    """
    plt = _plt()
    z = _zgrid(-1.5, 3.0) if z is None else np.asarray(z, float)
    fig, axs = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for c in c_values:
        lab = "c = inf (hinge)" if math.isinf(c) else f"c = {c:g}"
        axs[0].plot(z, loss_curve("lum", z, fixed_a, c), label=lab)
    axs[0].set_title(f"LUM loss, a = {fixed_a:g}")
    for a in a_values:
        axs[1].plot(z, loss_curve("lum", z, a, fixed_c), label=f"a = {a:g}")
    axs[1].plot(z, loss_curve("lum", z, math.inf, fixed_c), label="a = inf")
    axs[1].set_title(f"LUM loss, c = {fixed_c:g}")
    for ax in axs:
        ax.set_xlabel("u = y f(x)")
        ax.legend(fontsize=8)
        ax.set_ylim(0, 2.5)
    axs[0].set_ylabel("V(u)")
    fig.tight_layout()
    return fig


def plot_lum_hybrid(z: Sequence[float] | None = None):
    """[LZW] Figure 2: the hybrid LUM (``a -> inf``, ``c = 0``) against hinge and exponential
    losses (left) and between ``log(1 + e^-u)`` and ``1 + log(1 + e^-u)`` (right).

    Examples
    --------
    >>> len(plot_lum_hybrid().axes)
    2
    """
    plt = _plt()
    z = _zgrid(-2.0, 3.0) if z is None else np.asarray(z, float)
    hyb = loss_curve("lum", z, math.inf, 0.0)
    fig, axs = plt.subplots(1, 2, figsize=(10, 4))
    axs[0].plot(z, loss_curve("hinge", z), label="hinge")
    axs[0].plot(z, loss_curve("exp", z), label="exponential")
    axs[0].plot(z, hyb, "k", lw=2, label="LUM a = inf, c = 0")
    axs[0].set_ylim(0, 4)
    lg = loss_curve("logistic", z)
    axs[1].plot(z, lg, label="log(1 + exp(-u))")
    axs[1].plot(z, 1 + lg, label="1 + log(1 + exp(-u))")
    axs[1].plot(z, hyb, "k", lw=2, label="LUM a = inf, c = 0")
    for ax in axs:
        ax.set_xlabel("u = y f(x)")
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def plot_lum_minimizer(a: float = 1.0, c_values=(0, 1, math.inf), n: int = 999):
    """[LZW] Figure 3: ``f*(x)`` against ``p(x)`` for the LUM with ``a = 1`` and ``c = 0, 1, inf``.

    For ``c > 0`` every ``f`` in ``[-c/(1+c), c/(1+c)]`` maps to ``p = 1/2`` (the flat part);
    ``c = inf`` (SVM) gives ``sign(p - 1/2)``.

    Examples
    --------
    >>> len(plot_lum_minimizer().axes)
    1
    """
    plt = _plt()
    p = np.linspace(0.001, 0.999, n)
    fig, ax = plt.subplots(figsize=(5.5, 4.5))
    for c in c_values:
        f = lum_minimizer(p, a, c)
        lab = "c = inf (SVM)" if math.isinf(c) else f"c = {c:g}"
        (line,) = ax.plot(p[p < 0.5], f[p < 0.5], label=lab)
        ax.plot(p[p > 0.5], f[p > 0.5], color=line.get_color())
        if c > 0:  # the set of minimizers at p = 1/2
            h = 1.0 if math.isinf(c) else c / (1 + c)
            ax.plot([0.5, 0.5], [-h, h], color=line.get_color(), lw=3, alpha=0.6)
    ax.set_xlabel("p(x)")
    ax.set_ylabel("f*(x)")
    ax.set_ylim(-3, 3)
    ax.set_title(f"LUM population minimizer, a = {a:g}")
    ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


# ----------------------------------------------------------------------------- coefficient paths
def _spread(y: np.ndarray, gap: float, lo: float, hi: float) -> np.ndarray:
    """Label heights: ``y`` moved apart to at least ``gap`` (in sorted order), kept in ``[lo, hi]``
    when they fit."""
    order = np.argsort(y, kind="stable")
    v = np.asarray(y, dtype=float)[order].copy()
    for i in range(1, v.size):
        v[i] = max(v[i], v[i - 1] + gap)
    over = v[-1] - hi if v.size else 0.0
    if over > 0:
        v -= min(over, max(0.0, v[0] - lo))
    out = np.empty_like(v)
    out[order] = v
    return out


def plot_path(pf, columns=None, ax=None, label: bool = True, ylabel: str | None = None, n_labels: int = 10, **kwargs):
    """Coefficient paths of a :class:`~cohstats.results.PathFrame` against its sequence, glmnet's
    ``plot(fit, label=TRUE)``.

    The x axis is the sequence (log scale for penalties) oriented so that the least regularised
    end -- where the coefficients are largest -- is on the right; with ``label=True`` the
    ``n_labels`` curves largest in absolute value there are named at the right edge, outside the
    axes and moved apart so that names do not overlap, and no legend covers the curves (a K-class
    path with a curve per term and class stays readable). The top axis shows the number of
    nonzero coefficients when the frame has a ``df`` column. ``columns`` plots other columns
    (e.g. ``["train_error", "test_error"]``) against the sequence, with a legend beside the axes
    when there are several. Returns the Axes.
    """
    plt = _plt()
    xv = getattr(pf, "xvar", None) or pf.columns[0]
    coef_mode = columns is None
    cols = list(columns) if columns is not None else list(getattr(pf, "coef_columns", []) or [])
    if not cols:  # no coefficient paths: draw the other columns, named
        cols = [c for c in pf.columns if c != xv]
        coef_mode = False
    if isinstance(n_labels, (bool, np.bool_)) or not isinstance(n_labels, (int, np.integer)) or n_labels < 0:
        raise ValueError(f"n_labels must be a nonnegative whole number of curves to name; got {n_labels!r}")
    if ax is None:
        _, ax = plt.subplots(figsize=(6.4, 4.2), layout="constrained")
    x = np.asarray(pf[xv], dtype=float)
    logx = bool(getattr(pf, "log_x", False)) and np.all(x > 0)
    xp = np.log(x) if logx else x
    Y = np.column_stack([np.asarray(pf[c], dtype=float) for c in cols]) if cols else np.empty((len(x), 0))
    lines = [ax.plot(xp, Y[:, j], lw=1.2, label=str(c), **kwargs)[0] for j, c in enumerate(cols)]
    ax.set_xlabel(f"log({xv})" if logx else xv)
    if ylabel is None:
        ylabel = "coefficient" if coef_mode else " / ".join(str(c).replace("_", " ") for c in cols)
    ax.set_ylabel(ylabel)
    if not coef_mode:
        if label and len(cols) > 1:
            ax.legend(fontsize=7, frameon=False, loc="upper left", bbox_to_anchor=(1.02, 1.0), borderaxespad=0.0)
        return ax
    ax.axhline(0.0, color="0.6", lw=0.6)
    end = 0
    if len(x) > 1:
        norms = np.nansum(np.abs(Y[[0, -1]]), axis=1)
        end = -1 if norms[-1] >= norms[0] else 0
        if xp[end] < xp[end + 1 if end == 0 else 0]:  # least regularised end on the right
            ax.invert_xaxis()
    if "df" in pf.columns and len(x) > 1:
        top = ax.twiny()
        top.set_xlim(ax.get_xlim())
        idx = np.unique(np.linspace(0, len(x) - 1, min(6, len(x))).round().astype(int))
        top.set_xticks(xp[idx])
        top.set_xticklabels([str(int(v)) for v in np.asarray(pf["df"])[idx]])
        top.set_xlabel("nonzero coefficients")
    if label and cols and n_labels:
        yend = Y[end]
        ok = np.flatnonzero(np.isfinite(yend) & (np.abs(yend) > 0))
        named = ok[np.argsort(-np.abs(yend[ok]), kind="stable")[:n_labels]]
        lo, hi = ax.get_ylim()
        ys = _spread(yend[named], 0.045 * (hi - lo), lo, hi)
        for j, yt in zip(named, ys):
            ax.annotate(
                str(cols[j]),
                xy=(1.0, yend[j]),
                xycoords=("axes fraction", "data"),
                xytext=(1.0, yt),
                textcoords=("axes fraction", "data"),
                fontsize=7,
                va="center",
                ha="left",
                color=lines[j].get_color(),
                annotation_clip=False,
            )
    return ax
