"""Small reference fit functions for the tuning tests (independent of the other engineers).

``ridge_logit`` is a path fit following CONTRIBUTING's protocol: L2-penalised logistic
regression, (1/n) sum_i w_i log(1 + exp(-y_i f_i)) + (lambda/2) ||beta||^2, solved exactly
by Newton's method at every lambda (warm starts). ``ridge_logit_fixed`` is the same model as
a non-path fit at one lambda. ``shrunk_mean`` ignores x: p = expit(a + b * mean(y01)), a
linear smoother in y whose covariance penalty is known in closed form.
"""

import numpy as np
from scipy.special import expit

from cohstats.formula import build_design
from cohstats.validation import FitSpec
from cohstats.results import Fit, Summary


def _newton(X1, y, w, lam, beta, max_iter=100, tol=1e-12):
    n, p1 = X1.shape
    pen = np.full(p1, lam)
    pen[0] = 0.0
    for _ in range(max_iter):
        f = X1 @ beta
        q = expit(-y * f)  # = 1 - P(correct)
        g = -(X1.T @ (w * y * q)) / n + pen * beta
        H = (X1.T * (w * q * (1 - q))) @ X1 / n + np.diag(pen) + 1e-14 * np.eye(p1)
        step = np.linalg.solve(H, g)
        beta = beta - step
        if np.max(np.abs(step)) < tol:
            break
    return beta


class RidgeLogitFit(Fit):
    method = "ridge_logit"
    path_arg = "lambda_"  # cross-validation refits folds along the full-data sequence

    def _decision(self, X, s=None):
        c, b = self._coef_at(s)
        return X @ c + b

    def _proba(self, X, s=None):
        return expit(self._decision(X, s))

    def _summary(self):
        return Summary("ridge logit", {"n": self.nobs})


def ridge_logit(formula, data=None, lambda_=None, nlambda=12):
    """A user's own path fit function; ``ridge_logit.spec`` (below) declares its path."""
    d = build_design(formula, data)
    if lambda_ is None:
        lam = np.geomspace(1.0, 1e-3, nlambda)
    else:
        lam = np.atleast_1d(np.asarray(lambda_, dtype=float))
        if np.any(np.diff(lam) > 0):
            raise ValueError("lambda_ must be decreasing")
    X1 = np.column_stack([np.ones(d.nobs), d.X])
    beta = np.zeros(X1.shape[1])
    path = []
    for l in lam:
        beta = _newton(X1, d.y, d.weights, l, beta.copy())
        path.append(beta.copy())
    path = np.array(path)
    fit = RidgeLogitFit(d, {"lambda_": lam})
    fit.converged = True
    fit.lambda_ = lam
    fit.s = float(lam[-1])
    fit._coef_path = path[:, 1:]
    fit._intercept_path = path[:, 0]
    return fit


ridge_logit.spec = FitSpec("ridge_logit", path_args=("lambda_",))


class FixedFit(Fit):
    method = "ridge_logit_fixed"

    def _decision(self, X, s=None):
        return X @ self._coef + self._intercept

    def _proba(self, X, s=None):
        return expit(self._decision(X))

    def _summary(self):
        return Summary("fixed", {"n": self.nobs})


def ridge_logit_fixed(formula, data=None, lam=0.1, tag=None):
    """``tag`` is ignored (exact ties in grid searches)."""
    d = build_design(formula, data)
    X1 = np.column_stack([np.ones(d.nobs), d.X])
    beta = _newton(X1, d.y, d.weights, lam, np.zeros(X1.shape[1]))
    fit = FixedFit(d, {"lam": lam})
    fit._coef, fit._intercept = beta[1:], float(beta[0])
    return fit


class ShrunkMeanFit(Fit):
    method = "shrunk_mean"

    def _decision(self, X, s=None):
        return np.full(X.shape[0], self._intercept)

    def _proba(self, X, s=None):
        return expit(self._decision(X))

    def _summary(self):
        return Summary("shrunk mean", {"n": self.nobs})


def shrunk_mean(formula, data=None, a=-1.0, b=2.0):
    d = build_design(formula, data)
    fit = ShrunkMeanFit(d, {"a": a, "b": b})
    fit._coef = np.zeros(d.p)
    fit._intercept = a + b * np.mean((d.y + 1) / 2)
    return fit


class SoftmaxFit(Fit):
    method = "ridge_softmax"

    def _decision(self, X, s=None):
        return X @ self._coef + self._intercept

    def _proba(self, X, s=None):
        F = self._decision(X)
        F = F - F.max(axis=1, keepdims=True)
        E = np.exp(F)
        return E / E.sum(axis=1, keepdims=True)

    def _summary(self):
        return Summary("softmax", {"n": self.nobs})


def ridge_softmax(formula, data=None, lam=1e-3):
    """Multinomial logistic regression, (1/n) sum_i -log p_{y_i} + (lam/2) ||W||^2 (intercepts free),
    by Newton's method on the full (p+1)K parametrisation (ridge makes it identifiable)."""
    d = build_design(formula, data)
    n, K = d.nobs, d.n_classes
    yi = d.y_int
    X1 = np.column_stack([np.ones(n), d.X])
    q = X1.shape[1]
    E = np.eye(K)[yi]
    B = np.zeros((q, K))
    pen = np.full(q, lam)
    pen[0] = 1e-8
    for _ in range(100):
        F = X1 @ B
        F -= F.max(axis=1, keepdims=True)
        P = np.exp(F)
        P /= P.sum(axis=1, keepdims=True)
        G = X1.T @ (P - E) / n + pen[:, None] * B
        H = np.zeros((q * K, q * K))
        for a in range(K):
            for b in range(K):
                w = P[:, a] * ((a == b) - P[:, b])
                H[a * q : (a + 1) * q, b * q : (b + 1) * q] = (X1.T * w) @ X1 / n
        H += np.diag(np.tile(pen, K))
        step = np.linalg.solve(H, G.T.ravel()).reshape(K, q).T
        B -= step
        if np.max(np.abs(step)) < 1e-11:
            break
    fit = SoftmaxFit(d, {"lam": lam})
    fit._coef, fit._intercept = B[1:], B[0]
    return fit


def shrunk_softmax(formula, data=None, a=(0.0, 0.3, -0.2), b=4.0):
    """Ignores x: p_hat = softmax(a + b * class frequencies) (a K-class linear smoother in the
    label indicators, up to the softmax normalisation)."""
    d = build_design(formula, data)
    K = d.n_classes
    freq = np.bincount(d.y_int, minlength=K) / d.nobs
    fit = SoftmaxFit(d, {"a": a, "b": b})
    fit._coef = np.zeros((d.p, K))
    fit._intercept = np.asarray(a, dtype=float)[:K] + b * freq
    return fit
