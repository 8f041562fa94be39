"""The SVM-dual family: sequential minimal optimisation and the exact path in the class weight.

* :mod:`.smo` -- SMO for box-constrained SVM duals (libsvm's working-set selection, kernel-row cache);
* :mod:`.smo_lambda` -- SMO for the lambda-SVM dual of [RH];
* :mod:`.svmpath` -- the exact solution path of the weighted SVM in pi ([WSL] section 4);
* :mod:`.psi` -- psi-learning by difference-of-convex programming ([WSL] section 4.3).
"""
