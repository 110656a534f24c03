#!/usr/bin/env bash
# Build the documentation site into site/ (MkDocs, Material theme, the API reference from the
# docstrings by mkdocstrings), warnings as errors. Installs the [docs] extra into this
# checkout's .venv when MkDocs is missing there (from PyPI); makes the .venv if there is none.
# Usage: bash scripts/docs.sh [serve]     (serve: a live preview on http://127.0.0.1:8000)
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
    echo "docs.sh: making .venv"
    python3 -m venv .venv
fi
if ! .venv/bin/python -c "import mkdocs, mkdocstrings_handlers.python, material" 2>/dev/null; then
    echo "docs.sh: installing the [docs] extra into .venv"
    # the tools only: the API pages read the package's sources, not an installed copy
    .venv/bin/python - <<'PY'
import ast, re, subprocess, sys
with open("pyproject.toml") as f:      # the [docs] extra: one line of pyproject.toml
    docs = ast.literal_eval(re.search(r"^docs = (\[.*\])[ \t]*$", f.read(), re.M).group(1))
subprocess.check_call([sys.executable, "-m", "pip", "install", "-q", *docs])
PY
fi
export NO_MKDOCS_2_WARNING=1
if [ "${1:-}" = serve ]; then
    exec .venv/bin/mkdocs serve
fi
.venv/bin/mkdocs build --strict --clean
echo "docs.sh: the site is in site/ (open site/index.html)"
