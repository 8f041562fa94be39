"""The binary GKL estimator of [WSL] eq. (13)-(14) written out directly, as an independent
reference for the package's K-class estimator (which must reproduce it exactly for K = 2)."""

from __future__ import annotations

import numpy as np

from cohstats import metrics as _m
from cohstats.tuning._common import _EPS_P, _along, _has_path
from cohstats.tuning.measures import _outputs


def _clip(p):
    return np.clip(p, _EPS_P, 1.0 - _EPS_P)


def _as_p1(P):
    P = np.asarray(P, dtype=np.float64)
    if P.ndim == 3 and P.shape[-1] == 2:
        return P[..., 1]
    return P


def _logit(p):
    return np.log(p) - np.log1p(-p)


def _gkl_task(fit_fn, design, args, lam, p0, seed, D, tau, prob_args, parg=None, random_input="data"):
    """One input perturbation l and its D response perturbations, for all sequence values.

    Returns the additive sufficient statistics
    ``A = sum_m Lambda(p*) Y* / K``, ``B = sum_m Lambda(p*) / K``, ``Ysum = sum_m Y*``,
    ``dsum = sum_m [Delta(p0, p*, X*l) - Delta(p0, p*, X)]``, each (S, n) or (S,); with
    ``random_input="left_out"`` the second ``Delta`` runs over the inputs absent from ``X*l``.
    """
    rng = np.random.default_rng(seed)
    X, y = design.X, design.y
    n = y.shape[0]
    y01 = (y + 1.0) / 2.0
    xmask = rng.random(n) < tau
    xidx = rng.integers(0, n, size=n)
    src = np.where(xmask, xidx, np.arange(n))
    Xs = np.ascontiguousarray(X[src])
    absent = np.array([i not in set(src.tolist()) for i in range(n)])
    out = absent if random_input == "left_out" and absent.any() else np.ones(n, dtype=bool)
    p0c = _clip(p0)  # (S, n) at the original inputs
    p0s = p0c[:, src]  # p0 at the perturbed inputs X*l
    Kf = tau + tau * (1.0 - tau) * (y01[None] - p0s) ** 2 / (p0s * (1.0 - p0s))
    S = p0.shape[0]
    A = np.zeros((S, n))
    B = np.zeros((S, n))
    Ysum = np.zeros((S, n))
    dsum = np.zeros(S)
    prob_args = prob_args or {}
    for _ in range(D):
        ymask = rng.random(n) < tau
        u = rng.random(n)
        # common random numbers: the same (ymask, u) for every sequence value
        Ystar = np.where(ymask[None], np.where(u[None] < p0s, 1.0, -1.0), y[None])
        P = np.empty((S, n))
        if lam is None:
            fit = fit_fn(design.replace(X=Xs, y=Ystar[0]), **args)
            P[0] = _as_p1(fit._proba(X, **prob_args))
        else:
            # sequence values whose perturbed responses coincide share one path fit
            groups: dict = {}
            for s in range(S):
                groups.setdefault(Ystar[s].tobytes(), []).append(s)
            for idx in groups.values():
                sub = lam[idx]
                fit = fit_fn(design.replace(X=Xs, y=Ystar[idx[0]]), **_along(parg, args, sub))
                P[idx] = _as_p1(_outputs(fit, X, "prob", sub, prob_args))
        Pc = _clip(P)
        Ps = Pc[:, src]  # p* at the perturbed inputs
        lam_s = _logit(Ps)
        A += lam_s * Ystar / Kf
        B += lam_s / Kf
        Ysum += Ystar
        d_star = np.mean((1.0 - p0s) * np.log1p(-Ps) + p0s * np.log(Ps), axis=1)
        d_orig = np.mean(((1.0 - p0c) * np.log1p(-Pc) + p0c * np.log(Pc))[:, out], axis=1)
        dsum += d_star - d_orig
    # centred within this input perturbation (cov* is conditional on X*l, [WSL] eq. 11)
    W = A - (Ysum / D) * B
    return A, B, Ysum, W, dsum


def binary_gkl(
    fit_fn, design, args, full, tau, D, seed_seq, prob_args=None, centering="within", p0=None, random_input="data"
):
    """(estimate, cov, d_hat) of [WSL] eq. (9) with eq. (13) in the 0/1 coding, for a binary design."""
    n = design.nobs
    child = seed_seq.spawn(D)
    lam = np.asarray(full.lambda_, float) if _has_path(full) else None
    p_fit = _as_p1(_outputs(full, design.X, "prob", lam, prob_args))
    pert = p_fit if p0 is None else np.broadcast_to(np.asarray(p0, float), p_fit.shape).copy()
    parg = getattr(full, "path_arg", None)
    parts = [
        _gkl_task(fit_fn, design, args, lam, pert, child[l], D, tau, prob_args, parg, random_input) for l in range(D)
    ]
    A = sum(o[0] for o in parts)
    B = sum(o[1] for o in parts)
    Ys = sum(o[2] for o in parts)
    Wc = sum(o[3] for o in parts)
    ds = sum(o[4] for o in parts)
    D2 = D * D
    cov_pooled = (A - (Ys / D2) * B) / (2.0 * (D2 - 1))
    cov_within = Wc / (2.0 * D * (D - 1))
    y01 = (design.y + 1.0) / 2.0
    egkl = np.mean(_m._cre_terms(y01[None], _clip(p_fit)), axis=1)
    cov = cov_within if centering == "within" else cov_pooled
    d_hat = ds / (D2 - 1)
    assert n == p_fit.shape[-1]
    return egkl + cov.mean(axis=1) + d_hat, cov, d_hat
