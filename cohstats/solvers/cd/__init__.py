"""The coordinate-descent family: one elastic-net path driver for smooth margin losses.

* :mod:`.path` -- the path driver (warm starts, sequential strong rule, KKT check, per-``lambda``
  records) and the binary problems (C-loss, LUM, logistic, hinge smoothing ...);
* :mod:`.state` -- the solvers' state as named tuples (data, loss, penalty, control, buffers);
* :mod:`.scalar`, :mod:`.group`, :mod:`.group_newton`, :mod:`.kkt`, :mod:`.solve` -- its pieces:
  binary coordinate updates, grouped block passes (majorise-minimise, proximal Newton),
  objectives and KKT residuals, one penalised problem;
* :mod:`.design` -- argument checks, standardisation, ``lambda_max`` and ``lambda`` sequences;
* :mod:`.kernel` -- kernel expansions ([ZDJ] Algorithm 1) on the same driver;
* :mod:`.multi` -- the multicategory coherence loss of [ZJLY] with grouped coefficients;
* :mod:`.angle` -- the angle-based multicategory LUM (Zhang & Liu 2014) with grouped coefficients;
* :mod:`.lum_dual`, :mod:`.lum_kdual` -- the ridge LUM by coordinate ascent in its Fenchel dual
  (Hsieh et al. 2008), linear and kernel expansions;
* :mod:`.lum_refit` -- the two-parameter refit of the LUM ([LZW] eq. (9)), a damped Newton solve.
"""
