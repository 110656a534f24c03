"""TLS cost against the official binding: client CPU per fetch of benchmark (b)'s metric
set, and the time of a new context (connect + TLS handshake), over a private TLS pmcd
(tests/support/securepmcd.py) on the loopback; plain TCP on the same pmcd for scale.

    .venv/bin/pytest benchmarks/test_bench_tls.py -q -s

Both sides run benchmarks/tls_client.py (the same workload code) one after the other, in
subprocesses: /usr/bin/python3 for the official binding over libpcp, this venv's Python
for pcp-native. Not part of the normal test run (pyproject's testpaths is ["tests"]).
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH_DIR.parent / "tests"))

from support.securepmcd import SecureSetup, missing_tools  # noqa: E402

FETCHES = int(os.environ.get("PCP_BENCH_TLS_FETCHES", "2000"))
CONTEXTS = int(os.environ.get("PCP_BENCH_TLS_CONTEXTS", "50"))
REF_PYTHON = os.environ.get("PCP_BENCH_REF_PYTHON", "/usr/bin/python3")


def _run(python: str, spec: str, env: dict) -> dict:
    out = subprocess.run([python, str(BENCH_DIR / "tls_client.py"), spec, str(FETCHES),
                          str(CONTEXTS)], env=env, capture_output=True, text=True,
                         timeout=600, cwd="/")
    if out.returncode != 0:
        return {"error": out.stderr[-1500:]}
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_tls_fetch_and_handshake(tmp_path):
    why = missing_tools()
    if why:
        pytest.skip(why)
    setup = SecureSetup(str(tmp_path))
    try:
        port = setup.start("bench")
        conf = setup.client_tlsconf("verify", {"tls-verify-clients": "true",
                                               "tls-ca-cert-file": "ca.crt"})
        env = dict(os.environ, PCP_TLSCONF_PATH=conf)
        for k in ("PYTHONPATH", "VIRTUAL_ENV"):
            env.pop(k, None)
        rows = []
        for label, spec in (("TLS", "pcps://localhost:%d" % port),
                            ("TCP", "localhost:%d" % port)):
            ours = _run(sys.executable, spec, env)
            ref = _run(REF_PYTHON, spec, env)
            rows.append((label, ours, ref))
    finally:
        setup.stop()
    print("\n| transport | measure | pcp-native | official binding | official/ours |")
    print("|---|---|---:|---:|---:|")
    for label, ours, ref in rows:
        assert "error" not in ours and "error" not in ref, (ours, ref)
        assert ours["values"] == ref["values"] > 1000
        for key, what, scale, unit in (("fetch_cpu", "client CPU per pmFetch", 1e6, "µs"),
                                       ("extract_cpu", "client CPU per (b) round", 1e6, "µs"),
                                       ("fetch_wall", "wall time per fetch", 1e6, "µs"),
                                       ("connect_wall", "pmNewContext (median)", 1e3, "ms"),
                                       ("connect_cpu", "CPU per pmNewContext", 1e3, "ms")):
            print("| %s | %s | %.1f %s | %.1f %s | %.2fx |" % (
                label, what, ours[key] * scale, unit, ref[key] * scale, unit,
                ref[key] / ours[key] if ours[key] else float("inf")))
    tls_ours, tls_ref = rows[0][1], rows[0][2]
    # the target: benchmark (b) over TLS at least 2x less client CPU than the
    # official binding (a bare pmFetch is OpenSSL's and the kernel's time on both sides)
    assert tls_ref["extract_cpu"] / tls_ours["extract_cpu"] >= 2.0, rows
