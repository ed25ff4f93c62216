"""Runs a script of scripts/ under a Python that has the modules it needs.

`python3 scripts/plot_metrics ...` runs whichever python3 comes first on PATH (a virtual
environment, pyenv, conda), which may lack matplotlib, h5py or numpy, while the system's
/usr/bin/python3 has them (scripts/setup installs them there). require(script, modules), called
before the script imports them, returns when this interpreter has every module; else it runs
the script again, same arguments, under $STRATA_PYTHON (default /usr/bin/python3); else it
exits with status 1 and one line naming the missing modules and how to install them.
"""

import importlib.util
import os
import sys

FALLBACK = "/usr/bin/python3"
MARK = "STRATA_PYTHON_REEXEC"  # the first interpreter, set on the second run (never a third)
APT = {"matplotlib": "python3-matplotlib", "h5py": "python3-h5py", "numpy": "python3-numpy"}


def missing(modules):
    """The modules of `modules` this interpreter cannot import."""
    return [m for m in modules if importlib.util.find_spec(m) is None]


def require(script, modules):
    lacking = missing(modules)
    if not lacking:
        return
    fallback = os.environ.get("STRATA_PYTHON") or FALLBACK
    first = os.environ.get(MARK)
    if not first and os.access(fallback, os.X_OK):
        os.environ[MARK] = sys.executable or "python3"
        os.execv(fallback, [fallback, os.path.abspath(sys.argv[0])] + sys.argv[1:])
    if first:
        tried = f"{first} and {sys.executable} lack"
    else:
        tried = f"{sys.executable} lacks (and {fallback} is not there to try)"
    sys.stderr.write(
        f"{script}: needs the Python modules {', '.join(lacking)}, which {tried}: install "
        f"them (apt-get install {' '.join(APT.get(m, m) for m in lacking)}, or pip install "
        f"{' '.join(lacking)}), or set STRATA_PYTHON to a python3 that has them\n")
    sys.exit(1)
