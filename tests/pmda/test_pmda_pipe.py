"""A PMDA driven over its pipe by the test as pmcd would drive it, on both bindings: the
reply PDUs byte for byte (CREDS, DESC, TEXT, INSTANCE, PMNS names and children, LABEL,
ERROR, and a store's status), then EOF on the pipe, after which the PMDA leaves and
writes its log footer."""
from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from pcp._core import wire as W
from pcp._decode import pdu as client
from tests.pmda.pmcdrun import OFFICIAL, OURS, PMDAS, _our_env, masked_log

pytestmark = pytest.mark.reference

SCRIPT = Path(__file__).resolve().parent / "pmdas" / "pmdaedge.python"


def _read_pdu(stream) -> bytes:
    head = stream.read(12)
    assert len(head) == 12, head
    length = struct.unpack(">I", head[:4])[0]
    return head + stream.read(length - 12)


def _requests():
    store = client.encode_store(0, 0, 0, {"pmids": [(480 << 22) | 1], "numvals": [1],
                                          "valfmts": [0], "insts": [-1], "lvals": [77],
                                          "vtypes": [0], "poffs": [0], "plens": [0],
                                          "payload": b""})
    return [
        ("desc", client.encode_desc_req(3, (480 << 22) | 2)),
        ("desc_unknown", client.encode_desc_req(3, (480 << 22) | (9 << 10) | 9)),
        ("text", client.encode_text_req(3, (480 << 22) | 0, 5)),
        ("text_help", client.encode_text_req(3, (480 << 22) | 0, 6)),
        ("text_empty_help", client.encode_text_req(3, (480 << 22) | 1, 6)),
        ("text_indom", client.encode_text_req(3, 480 << 22, 10)),
        ("instances", client.encode_instance_req(3, 480 << 22, -1, b"")),
        ("instance_name", client.encode_instance_req(3, 480 << 22, -1, b"one")),
        ("instance_number", client.encode_instance_req(3, 480 << 22, 5, b"")),
        ("instance_unknown", client.encode_instance_req(3, (480 << 22) | 7, -1, b"")),
        ("children", client.encode_pmns_node(3, W.PDU_PMNS_CHILD, 1, b"edge")),
        ("traverse", client.encode_pmns_node(3, W.PDU_PMNS_TRAVERSE, 0, b"edge.inst")),
        ("name", client.encode_pmns_names(3, [b"edge.type.t3"])),
        ("name_unknown", client.encode_pmns_names(3, [b"edge.nope"])),
        ("pmid_names", client.encode_ids(3, W.PDU_PMNS_IDS, 0, [(480 << 22) | 3])),
        ("labels_domain", client.encode_label_req(3, 480, 0x02)),
        ("labels_instances", client.encode_label_req(3, 480 << 22, 0x20)),
        ("labels_item", client.encode_label_req(3, (480 << 22) | 0, 0x10)),
        # labels __pmAddLabels refuses: alone, then followed by good notes
        ("labels_item_refused", client.encode_label_req(3, (480 << 22) | 1, 0x10)),
        ("labels_item_refused_notes", client.encode_label_req(3, (480 << 22) | 2, 0x10)),
        ("labels_instances_refused", client.encode_label_req(3, (480 << 22) | 1, 0x20)),
        ("store", store),
        ("fetch", client.encode_fetch(3, False, 3, [(480 << 22) | 0, (480 << 22) | 6,
                                                    (480 << 22) | (2 << 10)])),
    ]


def _drive(tmp: Path, python: str) -> dict:
    tmp.mkdir()
    env = dict(os.environ, PCP_PMDAS_DIR=str(tmp), PCP_VAR_DIR=str(tmp))
    env.pop("PYTHONPATH", None)
    if python != OFFICIAL:
        env.update(_our_env())
        if os.environ.get("PCP_TEST_ASAN_PRELOAD"):
            env["LD_PRELOAD"] = os.environ["PCP_TEST_ASAN_PRELOAD"]
    shutil.copy(SCRIPT, tmp / SCRIPT.name)
    proc = subprocess.Popen([python, str(tmp / SCRIPT.name)], cwd=str(tmp), env=env,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    out = {}
    try:
        creds = _read_pdu(proc.stdout)
        out["creds"] = creds[:8] + creds[12:]          # its sender is the PMDA's pid
        proc.stdin.write(client.encode_creds(0, 0))
        proc.stdin.flush()
        for key, request in _requests():
            proc.stdin.write(request)
            proc.stdin.flush()
            out[key] = _read_pdu(proc.stdout).hex()
        proc.stdin.close()
        out["status"] = proc.wait(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    log = (tmp / "edge.log").read_text()
    out["footer"] = log.rstrip().splitlines()[-1].startswith("Log finished")
    out["log"] = masked_log(log)
    return out


def test_pipe_replies_byte_for_byte(tmp_path):
    if not (PMDAS / "trivial").is_dir():
        pytest.fail("PCP's PMDAs are not installed") if os.environ.get("CI") else \
            pytest.skip("PCP's PMDAs are not installed")
    ref = _drive(tmp_path / "ref", OFFICIAL)
    ours = _drive(tmp_path / "ours", OURS)
    assert ref["footer"] and ref["status"] == 0
    for key in ref:
        if key == "log":
            mask = [line.replace(str(tmp_path / "ref"), "T") for line in ref[key]]
            assert [line.replace(str(tmp_path / "ours"), "T") for line in ours[key]] == mask
            continue
        assert ours[key] == ref[key], key
