"""The tree family: histogram trees on pre-binned features and multiclass boosting.

* :mod:`.grow` -- weighted least-squares regression trees (best first) and Gini classification
  trees with cost-complexity pruning;
* :mod:`.boost` -- GentleBoost.C ([ZJLY] Algorithm 1) and the boosting baselines of its Table 2.
"""
