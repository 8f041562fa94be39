"""Test-suite settings: deterministic property tests and a headless matplotlib."""

import os

import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

# Property tests are derandomized so that CI runs are reproducible; the "dev" profile
# (HYPOTHESIS_PROFILE=dev) explores new examples on every run.
settings.register_profile(
    "ci", derandomize=True, deadline=None, print_blob=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.register_profile("dev", deadline=None, max_examples=200)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
