"""``import cohstats`` is lazy: numba and the solvers are imported on first use, not at import.

The import time itself is measured in a benchmark (it depends on the machine's load), not here.
"""

import subprocess
import sys


def test_import_is_lazy():
    code = (
        "import sys; import cohstats; "
        "print(int('numba' in sys.modules)); "
        "print(sorted(m for m in sys.modules if m.startswith('cohstats.solvers')))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split("\n")
    assert out[0] == "0", "import cohstats must not import numba (lazy submodules)"
    assert out[1] == "[]", f"import cohstats imported solver modules: {out[1]}"
