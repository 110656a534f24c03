"""Differential tests: the CONTEXT label set of a PM_CONTEXT_LOCAL context.

The official binding opens a LOCAL context (libpcp composes its context labels from
$PCP_SYSCONF_DIR/labels, the host's names and the caller's ids) and hands out the raw
pmLabelSet through ctypes; pcp._local.labels.context_labels() must give the same JSON
text and the same (name, namelen, flags, value, valuelen) records.  PCP_PMCDCONF_PATH
points at an empty file so that libpcp loads no DSO PMDA into the reference process.
"""

import hashlib
import json
import os
import shutil
import subprocess
from types import SimpleNamespace
from typing import Any, Dict, Optional

import pytest

from pcp._core.errors import pmErr
from pcp._libpcp.labels import merge_label_sets
from pcp._local import labels as local_labels
from support import difftest

pytestmark = [pytest.mark.reference]

# The reference's view: pmGetContextLabels' dict and the raw pmLabelSet it comes from.
REFERENCE = r'''
import json
from ctypes import POINTER, byref
from pcp import pmapi
import cpmapi as c_api
ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
out = {}
try:
    out["dict"] = ctx.pmGetContextLabels()
except pmapi.pmErr as error:
    out["dict"] = {"error": error.args[0]}
except ValueError as error:  # the binding's json.loads of label text libpcp mangled
    out["dict"] = {"crash": type(error).__name__}
sets = POINTER(pmapi.pmLabelSet)()
count = pmapi.LIBPCP.pmGetContextLabels(byref(sets))
out["count"] = count
if count > 0:
    s = sets[0]
    out["set"] = {
        "inst": s.inst, "nlabels": s.nlabels, "jsonlen": s.jsonlen,
        "json": s.json.decode("utf-8", "surrogateescape") if s.json else None,
        "labels": [[s.labels[i].name, s.labels[i].namelen, s.labels[i].flags & 0xFF,
                    s.labels[i].value, s.labels[i].valuelen] for i in range(s.nlabels)],
        "compound": s.compound & 1,
    }
    try:  # merging looks compound-flagged names up in the set's own name table
        out["set"]["merged"] = pmapi.pmContext.pmMergeLabelSets([s])
    except pmapi.pmErr as error:
        out["set"]["merged"] = error.args[0]
print(json.dumps(out))
'''


@pytest.fixture
def empty_pmcd_conf(tmp_path):
    path = tmp_path / "pmcd.conf"
    path.write_text("")
    return str(path)


def reference(sysconf: Optional[str], pmcd_conf: str) -> Dict[str, Any]:
    env = {"PCP_PMCDCONF_PATH": pmcd_conf}
    if sysconf is not None:
        env["PCP_SYSCONF_DIR"] = sysconf
    full = difftest._env(False)
    full.pop("PCP_SYSCONF_DIR", None)
    full.update(env)
    proc = subprocess.run([difftest.REF_PYTHON, "-c", REFERENCE], cwd=difftest._cwd(),
                          env=full, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ours(monkeypatch, sysconf: Optional[str]) -> Dict[str, Any]:
    if sysconf is None:
        monkeypatch.delenv("PCP_SYSCONF_DIR", raising=False)
    else:
        monkeypatch.setenv("PCP_SYSCONF_DIR", sysconf)
    out: Dict[str, Any] = {}
    try:
        got = local_labels.context_labels()
    except pmErr as error:
        return {"dict": {"error": error.args[0]}, "count": error.args[0]}
    if got is None:
        return {"dict": {}, "count": 0}
    try:
        out["dict"] = json.loads(got.json.decode("utf-8", "surrogateescape"))
    except ValueError as error:
        out["dict"] = {"crash": type(error).__name__}
    out["count"] = 1
    out["set"] = {"inst": got.inst & 0xFFFFFFFF, "nlabels": got.nlabels,
                  "jsonlen": len(got.json),
                  "json": got.json.decode("utf-8", "surrogateescape"),
                  "labels": [list(label) for label in got.labels],
                  "compound": 1 if got.compound_names else 0}
    view = SimpleNamespace(
        inst=got.inst, nlabels=got.nlabels, json=got.json,
        labels=[SimpleNamespace(name=l[0], namelen=l[1], flags=l[2], value=l[3], valuelen=l[4])
                for l in got.labels],
        compound=out["set"]["compound"], _compound_names=got.compound_names)
    try:
        out["set"]["merged"] = merge_label_sets([view])
    except pmErr as error:
        out["set"]["merged"] = error.args[0]
    return out


def compare(monkeypatch, sysconf: Optional[str], pmcd_conf: str) -> Dict[str, Any]:
    ref = reference(sysconf, pmcd_conf)
    mine = ours(monkeypatch, sysconf)
    assert mine == ref
    return ref


def write_tree(root, files: Dict[str, Any]) -> str:
    """Create `files` ({relative path: text or bytes, or None for a directory})."""
    for name, content in files.items():
        path = os.path.join(str(root), name)
        if content is None:
            os.makedirs(path, exist_ok=True)
            continue
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as handle:
            handle.write(content.encode() if isinstance(content, str) else content)
    return str(root)


def test_machine_config(monkeypatch, empty_pmcd_conf):
    ref = compare(monkeypatch, None, empty_pmcd_conf)
    assert ref["count"] == 1
    # the host names and ids are always there, the user ids flagged optional
    text = ref["set"]["json"]
    flags = {text[name:name + namelen]: flags for name, namelen, flags, _, _ in ref["set"]["labels"]}
    assert flags["hostname"] == 0x01 and flags["userid"] == 0x81


def test_files_override_order_nesting_bad_and_optional(monkeypatch, empty_pmcd_conf, tmp_path):
    root = write_tree(tmp_path / "sysconf", {
        "labels/10.json": '{"b":1,"a":"first","hostname":"not-this-one","list":[1,2]}',
        "labels/15.json": '{bad json',
        "labels/20.json": '{"a":"second","c":{"d":[1,2],"e":true},"n":null}\n',
        "labels/3-no-suffix": '{"plain":"any name counts"}',
        "labels/.hidden.json": '{"hidden":1}',
        "labels/empty.json": "",
        "labels/nul.json": b'{"before":1}\0{"after":2}',
        "labels/p-after-optional.json": '{"p":{"q":1}}',
        "labels/optional/o.json": '{"z":null,"userid":5,"a":"optional wins"}',
        "labels/optional/p.json": '{"opt":2.5e3}',
        "labels/optional/q.json": '[1,2]',
    })
    ref = compare(monkeypatch, root, empty_pmcd_conf)
    got = ref["dict"]
    assert got["a"] == "optional wins" and "hidden" not in got and "after" not in got
    assert got["userid"] == os.getuid() and got["hostname"] != "not-this-one"


def test_whitespace_in_an_array_mangles_the_text(monkeypatch, empty_pmcd_conf, tmp_path):
    # libpcp measures an array in the input but places it in the whitespace-free copy:
    # the set's text is no longer JSON and the binding's dict conversion fails.
    root = write_tree(tmp_path / "s", {"labels/a.json": '{"list":[1, 2],"k":"v"}'})
    assert compare(monkeypatch, root, empty_pmcd_conf)["dict"] == {"crash": "JSONDecodeError"}


def test_first_file_names_stay_with_the_set(monkeypatch, empty_pmcd_conf, tmp_path):
    # libpcp keeps the compound names of the text a set was created from, keyed by
    # offsets into that text: a later merge can print a stale name ("a.x" twice).
    root = write_tree(tmp_path / "first", {
        "labels/1.json": '{"a":{"x":1,"y":2},"m":1}',
        "labels/2.json": '{"b":2, "a.x":7}',
        "labels/3": "",
    })
    assert compare(monkeypatch, root, empty_pmcd_conf)["set"]["json"].count('"a.x"') == 2
    # ... and never adopts the names of a later text
    root = write_tree(tmp_path / "later", {
        "labels/1.json": '{"Aaaaaaaaaaaa":1}',
        "labels/2.json": '{"a":{"bbbbbbb":1,"c":2}}',
    })
    assert '"a.bbbbbbb"' in compare(monkeypatch, root, empty_pmcd_conf)["set"]["json"]


def test_stale_compound_name_in_a_later_merge(monkeypatch, empty_pmcd_conf, tmp_path):
    # The first file's "z...z.x" is kept under offset 41 of that file's text; in the
    # final set (root's one-digit group id) the plain file label "ha" sits at offset 41,
    # so pmMergeLabelSets prints the stale name for it while the set's text says "ha".
    root = write_tree(tmp_path / "s", {
        "labels/1.json": '{"%s":{"x":1}}' % ("z" * 35),
        "labels/2.json": '{"ha":1}',
    })
    ref = compare(monkeypatch, root, empty_pmcd_conf)
    assert ref["set"]["compound"] == 1 and '"ha":1' in ref["set"]["json"]
    if ref["set"]["json"].startswith('{"domainname":"localdomain","groupid":0,"ha"'):
        assert ref["set"]["merged"].count('"%s.x":1' % ("z" * 35)) == 2


def test_no_labels_directory(monkeypatch, empty_pmcd_conf, tmp_path):
    ref = compare(monkeypatch, str(tmp_path / "nothing-here"), empty_pmcd_conf)
    assert ref["count"] < 0
    # labels/ as a plain file: scandir's ENOTDIR
    write_tree(tmp_path / "file", {"labels": "{}"})
    assert compare(monkeypatch, str(tmp_path / "file"), empty_pmcd_conf)["count"] < 0


def test_labels_without_optional(monkeypatch, empty_pmcd_conf, tmp_path):
    root = write_tree(tmp_path / "s", {"labels/x.json": '{"groupid":"overridden","k":"v"}'})
    ref = compare(monkeypatch, root, empty_pmcd_conf)
    assert ref["dict"]["groupid"] == os.getgid() and ref["dict"]["k"] == "v"


@pytest.mark.parametrize("conf,hashed", [
    ("[global]\nmachineid_hash = sha256\n", True),
    ("# comment\n  machineid_hash:sha256\n", True),
    ("[global]\nmachineid_hash = none\n", False),
    ("[other]\nmachineid_hash = sha256\n", False),
    ("machineid_hash = md5\n", False),
    ("  [global]\nmachineid_hash=sha256", True),
    ("machineid_hashsha256\n", False),           # the character after the key is skipped
    ("#" + "x" * 8190 + "machineid_hash = sha256\n", True),  # fgets' BUFSIZ pieces
])
def test_labels_conf_machineid_hash(monkeypatch, empty_pmcd_conf, tmp_path, conf, hashed):
    root = write_tree(tmp_path / "s", {"labels": None, "labels.conf": conf})
    ref = compare(monkeypatch, root, empty_pmcd_conf)
    assert ("machineid_sha256" in ref["dict"]) == hashed
    assert ("machineid" in ref["dict"]) != hashed


def test_host_label_fallbacks(monkeypatch, tmp_path):
    """What libpcp puts in when the host has no usable name, domain or machine id."""
    write_tree(tmp_path, {"labels": None})
    monkeypatch.setenv("PCP_SYSCONF_DIR", str(tmp_path))
    monkeypatch.setattr(local_labels, "_MACHINE_ID_FILE", str(tmp_path / "absent"))
    domain = tmp_path / "domainname"
    domain.write_text("(none)\n")
    monkeypatch.setattr(local_labels, "_DOMAINNAME_FILE", str(domain))
    labels = json.loads(local_labels.context_labels().json)
    assert labels["machineid"] == "localmachine" and labels["domainname"] == "localdomain"
    domain.write_text("example.org\n")
    (tmp_path / "id").write_text("  abc def\n")
    monkeypatch.setattr(local_labels, "_MACHINE_ID_FILE", str(tmp_path / "id"))
    (tmp_path / "labels.conf").write_text("machineid_hash=sha256")
    labels = json.loads(local_labels.context_labels().json)
    assert labels["domainname"] == "example.org"
    assert labels["machineid_sha256"] == hashlib.sha256(b"abc").hexdigest()


UTS_SCRIPT = 'hostname "$1" && domainname "$2" && exec "$3" -c "$4"'

OURS_PROGRAM = r"""
import json
from pcp._local.labels import context_labels
s = context_labels()
print(json.dumps({"json": s.json.decode(), "labels": [list(l) for l in s.labels]}))
"""


def run_in_uts(unshare: str, host: str, domain: str, ours_side: bool, program: str,
               env: Dict[str, str]) -> Any:
    full = difftest._env(ours_side)
    full.update(env)
    python = difftest.OUR_PYTHON if ours_side else difftest.REF_PYTHON
    proc = subprocess.run([unshare, "--uts", "sh", "-c", UTS_SCRIPT, "sh", host, domain,
                           python, program], cwd=difftest._cwd(), env=full,
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("host,domain", [("h" * 63, "example.org"), ("h" * 64, "(none)"),
                                         ("q", "d" * 63), ("q", "d" * 64)])
def test_host_and_domain_names(empty_pmcd_conf, tmp_path, host, domain):
    """gethostname/getdomainname edge cases, in a private UTS namespace (root only)."""
    unshare = shutil.which("unshare")
    if unshare is None or os.geteuid() != 0:
        pytest.skip("needs root and unshare(1) to set host names privately")
    probe = subprocess.run([unshare, "--uts", "true"], capture_output=True)
    if probe.returncode != 0:
        pytest.skip("this machine refuses a private UTS namespace: %r" % probe.stderr[-200:])
    write_tree(tmp_path, {"labels": None})
    env = {"PCP_SYSCONF_DIR": str(tmp_path), "PCP_PMCDCONF_PATH": empty_pmcd_conf}
    ref_program = REFERENCE.replace(
        "print(json.dumps(out))",
        'print(json.dumps({"json": out["set"]["json"], "labels": out["set"]["labels"]}))')
    ref = run_in_uts(unshare, host, domain, False, ref_program, env)
    mine = run_in_uts(unshare, host, domain, True, OURS_PROGRAM, env)
    assert mine == ref


LOOKUP_PROGRAM = r'''
import json
from ctypes import POINTER, byref
from pcp import pmapi
import cpmapi as c_api
ctx = pmapi.pmContext(c_api.PM_CONTEXT_LOCAL, None)
pmid = ctx.pmLookupName(["sampledso.long.one"])[0]
merged = ctx.pmLookupLabels(pmid)
sets = POINTER(pmapi.pmLabelSet)()
count = pmapi.LIBPCP.pmLookupLabels(pmid, byref(sets))
first = sets[0]
print(json.dumps({
    "count": count, "context": merged.get(c_api.PM_LABEL_CONTEXT),
    "json": first.json.decode(), "inst": first.inst,
    "labels": [[first.labels[i].name, first.labels[i].namelen, first.labels[i].flags & 0xFF,
                first.labels[i].value, first.labels[i].valuelen]
               for i in range(first.nlabels)]}))
'''


def test_lookup_labels_starts_with_the_context_set(monkeypatch, tmp_path):
    """pmLookupLabels' first set (here with the sample DSO as the only PMDA, so that
    there is a metric to ask about) is the same context set."""
    root = write_tree(tmp_path / "s", {
        "labels/1.json": '{"site":{"rack":4,"row":"b"}}',
        "labels/optional/2.json": '{"team":"ops"}',
    })
    pmcd_conf = tmp_path / "pmcd.conf"
    pmcd_conf.write_text("sampledso\t30\tdso\tsample_init\t"
                         "/var/lib/pcp/pmdas/sample/pmda_sample.so\n")
    ref = difftest.run_program(LOOKUP_PROGRAM, False, {"PCP_SYSCONF_DIR": root,
                                                       "PCP_PMCDCONF_PATH": str(pmcd_conf)})
    assert "__crash__" not in ref, ref
    monkeypatch.setenv("PCP_SYSCONF_DIR", root)
    got = local_labels.context_labels()
    assert ref["count"] >= 2   # the context set and the sample agent's domain set at least
    assert [got.inst & 0xFFFFFFFF, got.json.decode(), [list(l) for l in got.labels]] == \
        [ref["inst"], ref["json"], ref["labels"]]
    assert json.loads(got.json) == ref["context"]
    assert ref["context"]["site.rack"] == 4 and ref["context"]["team"] == "ops"


def test_files_near_the_size_limit(monkeypatch, empty_pmcd_conf, tmp_path):
    """A file past PM_MAXLABELJSONLEN-2 bytes is refused (-E2BIG) and skipped; a
    dangling link reads as empty text and starts an empty set; a merge whose result
    comes within three bytes of the buffer's end is refused and the file skipped."""
    edge = '{"edge": "%s"}' % ("x" * (65533 - len('{"edge": ""}')))
    root = write_tree(tmp_path / "s", {
        "labels/big.json": '{"big":"%s"}' % ("x" * 65600),
        "labels/edge.json": edge,
        "labels/ok.json": '{"ok":1}',
    })
    os.symlink("/nonexistent", os.path.join(root, "labels", "dangling"))
    ref = compare(monkeypatch, root, empty_pmcd_conf)
    assert ref["dict"]["ok"] == 1 and "edge" not in ref["dict"]
    # the same file first in an empty directory: the set is too big for the host labels
    os.unlink(os.path.join(root, "labels", "dangling"))
    assert compare(monkeypatch, root, empty_pmcd_conf)["count"] < 0


MERGE_PROGRAM = r'''
import json
from pcp import pmapi
out = []
for n in range(65526, 65536):
    text = '{"e":"' + 'x' * (n - 8) + '"}'
    try:
        out.append([n, len(pmapi.pmContext.pmMergeLabels([text]))])
    except pmapi.pmErr as error:
        out.append([n, error.args[0]])
print(json.dumps(out))
'''


def test_merge_result_size_limit():
    """__pmMergeLabelSets, shared by pmMergeLabels and __pmAddLabels, refuses a result
    of PM_MAXLABELJSONLEN-3 bytes or more (it counts the space left down when it steps
    back over the last comma)."""
    ref = difftest.run_program(MERGE_PROGRAM, False)
    assert ref == difftest.run_program(MERGE_PROGRAM, True)
    assert [n for n, got in ref if got == -7] == [65532, 65533, 65534, 65535]
