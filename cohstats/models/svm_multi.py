"""The one-vs-one SVM's result :class:`MulticlassSVMFit` (:func:`cohstats.svm` with K > 2 classes).

Documented, saved and loaded as ``cohstats.models.svm.MulticlassSVMFit``.
"""

from __future__ import annotations


import numpy as np
import pandas as pd

from cohstats.coupling import pairwise_coupling
from cohstats.results import Summary
from cohstats.models.svm_result import SVMFit, _METHODS, _check_s


class MulticlassSVMFit(SVMFit):
    """A one-vs-one SVM for K > 2 classes; see :func:`svm`.

    One binary C-SVM per pair of classes ``a < b`` (class order), fitted on the rows of the two
    classes. Decision values ``predict(type="link")`` have one column per pair, named
    ``"a vs b"``, positive favouring ``a`` (libsvm's and scikit-learn's
    ``decision_function_shape="ovo"`` convention); classes are predicted by their votes (ties
    to the class listed first, as libsvm). Probabilities couple the pairwise estimates of any
    binary method (Wu, Lin & Weng 2004, method 2; :mod:`cohstats.coupling`).

    Attributes
    ----------
    coef : DataFrame terms x pairs (linear kernels; original scale), else None.
    intercept : Series by pair.
    dual_coef : DataFrame, rows the training-row labels of the support points, one column per
        pair (the expansion coefficient of the point in that pair's decision value; 0 when the
        point is not a support vector of that pair).
    support_ : sorted positions of the rows that are support vectors of at least one pair.
    pairs : list of ``(a, b)`` class labels.
    """

    title = "Support vector machine (one-vs-one)"

    @classmethod
    def _from_arrays(
        cls,
        design,
        *,
        kernel,
        kernel_arg,
        C,
        lambda_,
        pi,
        m,
        standardize,
        Z,
        scaling,
        pairs,
        pair_idx,
        pair_fits,
        beta,
        dual_alpha,
        cost,
        support,
        n_iter,
        converged,
        objective,
        bpair,
        prob_method,
        cache_size,
        path_method,
        n_jobs,
        fit_fn,
        fit_args,
        call,
        coef=None,
        fitted=None,
    ) -> "MulticlassSVMFit":
        """Build a one-vs-one fit from its binary pair fits (every piece of state a keyword).

        ``beta``, ``dual_alpha``, ``cost`` are (n, P) with one column per pair (zero off the
        pair's rows), ``bpair`` the P intercepts of the pairwise decision values, ``coef`` the
        (p, P) input-space slopes of a linear kernel (original scale) and ``fitted`` the
        training decision values when already known (else computed on first use).
        """
        self = cls._blank(design, call)
        self._init_svm(
            kernel=kernel,
            kernel_arg=kernel_arg,
            C=C,
            pi=pi,
            m=m,
            cost=cost,
            standardize=standardize,
            Z=Z,
            scaling=scaling,
            prob_method=prob_method,
            cache_size=cache_size,
            fit_fn=fit_fn,
            fit_args=fit_args,
            path_method=path_method,
            n_jobs=n_jobs,
        )
        self.pairs, self._pair_idx, self._pair_fits = pairs, pair_idx, pair_fits
        self._beta, self.dual_alpha_ = beta, dual_alpha
        self.support_ = support
        self.objective = objective
        self._bpair = bpair
        intercept = np.array(bpair) if coef is None else bpair - scaling[0] @ coef
        lam = self._checked_lambda(lambda_)
        if lam.size != 1:
            raise ValueError(f"{cls.__name__}: lambda_ holds the one fitted penalty; got {lam.size} values")
        self._set_contract(
            lambda_=lam, s=float(lam[0]), converged=converged, n_iter=n_iter, coef=coef, intercept=intercept
        )
        if fitted is not None:
            self._fitted = fitted
        return self

    @property
    def fitted_decision(self) -> np.ndarray:
        """Pairwise decision values of the training rows (computed on first use)."""
        if self.__dict__.get("_fitted") is None:
            self._fitted = self._decision(self.design.X)
        return self._fitted

    @property
    def pair_names(self) -> list:
        return [f"{a} vs {b}" for a, b in self.pairs]

    @property
    def coef(self):
        if self._coef is None:
            return None
        return pd.DataFrame(self._coef, index=self.xnames, columns=self.pair_names)

    @property
    def intercept(self):
        return pd.Series(self._intercept, index=self.pair_names, name="intercept")

    def coef_at(self, s=None):
        """Intercepts and coefficients (rows) by pair (columns) of a linear one-vs-one fit."""
        self._check_s(s, "coef_at")
        if self._coef is None:
            raise ValueError("a kernel svm has no input-space coefficients; see dual_coef or predict(type='link')")
        return pd.DataFrame(
            np.vstack([self._intercept[None], self._coef]), index=["(Intercept)"] + self.xnames, columns=self.pair_names
        )

    @property
    def dual_coef(self) -> pd.DataFrame:
        sv = self.support_
        return pd.DataFrame(self._beta[sv], index=self._row_labels(sv), columns=self.pair_names)

    def _decision(self, X: np.ndarray, s=None) -> np.ndarray:
        _check_s(self, s)
        if self._coef is not None:
            return np.asarray(X, dtype=np.float64) @ self._coef + self._intercept
        # one kernel block against the union of the support points serves every pair
        Z = self._std(X)
        sv = self.support_
        B = self._beta[sv]
        out = np.empty((Z.shape[0], B.shape[1]))
        for lo in range(0, Z.shape[0], 2048):
            out[lo : lo + 2048] = self._kernel_to_train(Z[lo : lo + 2048], sv) @ B + self._bpair
        return out

    def _class_scores(self, X: np.ndarray, s=None) -> np.ndarray:
        """Votes ``(N, K)``: pair ``(a, b)`` votes for ``a`` when its decision value is > 0."""
        F = self._decision(X, s=s)
        K = self.n_classes
        votes = np.zeros((F.shape[0], K))
        rows = np.arange(F.shape[0])
        for k, (i, j) in enumerate(self._pair_idx):
            win = np.where(F[:, k] > 0, i, j)
            np.add.at(votes, (rows, win), 1.0)
        return votes

    def _classify(self, X: np.ndarray, s=None, **kw) -> np.ndarray:
        # the first maximum of the votes: libsvm's tie rule
        return np.argmax(self._class_scores(X, s=s), axis=1)

    def _link_columns(self, k: int) -> list:
        return self.pair_names

    def pairwise_prob(self, X: np.ndarray, method: str | None = None, m: int | None = None) -> np.ndarray:
        """``(N, n_pairs)`` estimates of ``P(Y = a | Y in {a, b}, x)`` for every pair ``(a, b)``,
        each from the binary method ``method`` applied to that pair's SVM."""
        method = self.prob_method if method is None else method
        if method not in _METHODS:
            raise ValueError(f"method must be one of {_METHODS}; got {method!r}")
        Z = self._std(X)
        return np.column_stack(
            [1.0 - np.asarray(f._proba(Z, method=method, m=m), dtype=float) for f in self._pair_fits]
        )

    def _proba(self, X: np.ndarray, s=None, method: str | None = None, m: int | None = None, **kw) -> np.ndarray:
        _check_s(self, s)
        if kw:
            raise TypeError(f"unexpected arguments for svm probabilities: {sorted(kw)} (use method= and m=)")
        r = self.pairwise_prob(X, method=method, m=m)
        K = self.n_classes
        R = np.zeros((r.shape[0], K, K))
        for k, (i, j) in enumerate(self._pair_idx):
            R[:, i, j] = r[:, k]
            R[:, j, i] = 1.0 - r[:, k]
        return pairwise_coupling(R)

    def platt_tuned(self, *args, **kwargs):
        """Tuned Platt of every pair (:meth:`SVMFit.platt_tuned` on each pairwise SVM, with the
        same arguments); returns the list of results in pair order."""
        return [f.platt_tuned(*args, **kwargs) for f in self._pair_fits]

    @property
    def platt(self):
        raise AttributeError(
            "a one-vs-one fit has one Platt sigmoid per pair: use predict(type='prob', method='platt')"
        )

    @property
    def rho_(self):
        return np.array([f.rho_ for f in self._pair_fits])

    def path(self, m: int | None = None):
        raise NotImplementedError(
            "the pi path belongs to a binary SVM; for K > 2 classes each pair has its own (used by method='bracket')"
        )

    def plot(self, ax=None, **kwargs):
        """Training decision values of every pair, by the true class (one panel of boxes);
        returns the matplotlib Axes."""
        import matplotlib.pyplot as plt

        if ax is None:
            _, ax = plt.subplots(figsize=(max(6.4, 1.2 * len(self.pairs)), 4.2))
        F = self.fitted_decision
        yi = self.design.y_int
        pos, data, ticks = [], [], []
        for k, (i, j) in enumerate(self._pair_idx):
            for off, c in ((-0.2, i), (0.2, j)):
                data.append(F[yi == c, k])
                pos.append(k + off)
            ticks.append(self.pair_names[k])
        ax.boxplot(data, positions=pos, widths=0.3, **kwargs)
        ax.set_xticks(range(len(ticks)))
        ax.set_xticklabels(ticks, rotation=30, ha="right")
        ax.axhline(0.0, color="0.6", lw=0.6)
        ax.set_ylabel("pairwise decision value (> 0 favours the first class)")
        ax.set_title("one-vs-one SVM: training decision values (left box: first class)")
        return ax

    def _summary(self) -> Summary:
        info, notes = self._summary_head()
        yi = self.design.y_int
        info.update(
            {
                "classes": self.n_classes,
                "pairs (one-vs-one)": len(self.pairs),
                "support vectors": int(self.support_.size),
                "iterations (all pairs)": self.n_iter,
                "converged": self.converged,
                "training error": float(np.mean(self._classify(self.design.X) != yi)),
            }
        )
        rows = []
        for (a, b), f in zip(self.pairs, self._pair_fits):
            rows.append(
                {
                    "pair": f"{a} vs {b}",
                    "n": f.nobs,
                    "support vectors": int(f.support_.size),
                    "at bound": int(np.sum((f.dual_alpha_ >= f.cost) & (f.cost > 0))),
                    "intercept": -f._b,
                    "converged": f.converged,
                }
            )
        tables = {"Pairs": pd.DataFrame(rows).set_index("pair")}
        if self._coef is not None:
            tables["Coefficients"] = pd.DataFrame(
                np.vstack([self._intercept[None], self._coef]),
                index=["(Intercept)"] + self.xnames,
                columns=self.pair_names,
            )
        notes.insert(
            0,
            "one binary SVM per pair of classes; 'a vs b' > 0 votes for a; classes by "
            "votes (ties to the class listed first), probabilities by pairwise coupling "
            "(Wu, Lin & Weng 2004)",
        )
        if self.standardize:
            notes.append("inputs standardised (sd with divisor n) before the kernel")
        return Summary(self.title, info, tables, notes, call=self.call_string())

    def _repr_extra(self) -> str:
        return (
            f"{self.kernel.describe()}, lambda_={float(self.lambda_[0]):.4g}, "
            f"{len(self.pairs)} pairs, SV={self.support_.size}"
        )


MulticlassSVMFit.__module__ = "cohstats.models.svm"  # its public home (documentation, saved files)
