"""Host specification parsing (protocol.md 8.1/8.2) and pmGetConfig."""
from __future__ import annotations

import errno
import json
import os
import subprocess

import pytest

from pcp._core.config import pmGetConfig, read_pcp_conf
from pcp._core.errors import pmErr
from pcp._live.hostspec import Host, HostSpecError, default_socket_path, parse_hostspec

pytestmark = pytest.mark.timeout(60)

PM_ERR_GENERIC = -12345
PM_ERR_NOTHOST = -12369
REFERENCE_PYTHON = "/usr/bin/python3"


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch):
    for key in ("PMCD_SOCKET", "PCP_CONF", "PCP_DIR", "PCP_RUN_DIR"):
        monkeypatch.delenv(key, raising=False)


def hosts(spec: str):
    return [(h.name, h.ports) for h in parse_hostspec(spec).hosts]


# ---- host lists ----------------------------------------------------------------------

@pytest.mark.parametrize("spec, expected", [
    ("localhost", [("localhost", [])]),
    ("localhost:44321", [("localhost", [44321])]),
    ("localhost:1,44321", [("localhost", [1, 44321])]),
    ("192.168.122.1:44321", [("192.168.122.1", [44321])]),
    ("[fe80::1]:44321", [("fe80::1", [44321])]),
    ("[fe80::5eff:35ff:fe07:55ca]:44321,4321@[fe80::5eff:35ff:fe07:55cc]:44322",
     [("fe80::5eff:35ff:fe07:55ca", [44321, 4321]), ("fe80::5eff:35ff:fe07:55cc", [44322])]),
    ("app1:44321,4321@firewall:44322", [("app1", [44321, 4321]), ("firewall", [44322])]),
    ("app1.aconex.com@firewall.aconex.com", [("app1.aconex.com", []),
                                             ("firewall.aconex.com", [])]),
    ("[localhost]", [("localhost", [])]),
    ("pcp:localhost", [("localhost", [])]),
    ("pcp://localhost:44321", [("localhost", [44321])]),
    ("pcp:///localhost", [("localhost", [])]),
    ("pcps://oss.sgi.com@proxy.org:45893?user=jimbo&pass=jones",
     [("oss.sgi.com", []), ("proxy.org", [45893])]),
    ("foo/bar", [("foo", [])]),                      # text after '/' is ignored
    ("localhost:44321/foo?compress", [("localhost", [44321])]),
    ("localhost!x", [("localhost!x", [])]),          # not a delimiter: part of the name
    ("localhost ", [("localhost ", [])]),
])
def test_host_lists(spec, expected):
    assert hosts(spec) == expected


@pytest.mark.parametrize("spec, expected", [
    ("a@@b", [("a", []), ("@b", [])]),      # after '@' a delimiter joins the next name
    ("a@:b", [("a", []), (":b", [])]),
    ("[]", [("]", [])]),                    # empty brackets name the host "]"
    ("localhost@", [("localhost", []), ("", [])]),
    ("a@b@c", [("a", []), ("b", []), ("c", [])]),
])
def test_libpcp_quirks_in_host_lists(spec, expected):
    assert hosts(spec) == expected


def test_ports_wrap_like_c_atoi():
    assert hosts("h:99999999999") == [("h", [1215752191])]
    assert hosts("h:00044321") == [("h", [44321])]


def test_protocol_and_derived_flags():
    hs = parse_hostspec("pcps://h")
    assert hs.protocol == "pcps" and hs.attributes == {"protocol": "pcps"}
    assert not hs.is_local and not hs.is_unix and hs.unix_path is None
    assert hs.host == Host("h", []) and hs.proxy is None
    assert parse_hostspec("h@p:9").proxy == Host("p", [9])
    assert parse_hostspec("h").protocol is None
    assert parse_hostspec("h").attributes == {}


# ---- socket paths ----------------------------------------------------------------------

@pytest.mark.parametrize("spec, path", [
    ("local:/run/x.sock", "/run/x.sock"),
    ("local:run/x.sock", "/run/x.sock"),
    ("local://run/x.sock", "/run/x.sock"),
    ("unix://path/to/socket", "/path/to/socket"),
    ("unix:/tmp/s?container=c", "/tmp/s"),
])
def test_socket_paths(spec, path):
    hs = parse_hostspec(spec)
    assert hs.unix_path == path and hs.hosts == []


def test_empty_socket_path_means_default(monkeypatch):
    monkeypatch.setenv("PCP_RUN_DIR", "/some/run")
    for spec in ("local:", "unix:", "local:?container=x", "local://"):
        assert parse_hostspec(spec).unix_path == "/some/run/pmcd.socket"
    monkeypatch.setenv("PMCD_SOCKET", "/elsewhere/pmcd.sock")
    assert parse_hostspec("unix:").unix_path == "/elsewhere/pmcd.sock"
    assert default_socket_path() == "/elsewhere/pmcd.sock"


def test_one_character_path_before_delimiter_is_default(monkeypatch):
    # libpcp quirk, verified live: "local:x?container=y" uses the default socket.
    monkeypatch.setenv("PMCD_SOCKET", "/d.sock")
    assert parse_hostspec("local:x?container=y").unix_path == "/d.sock"
    assert parse_hostspec("local:x").unix_path == "/x"


def test_local_and_unix_flags():
    assert parse_hostspec("local:").is_local
    assert parse_hostspec("local:").attributes == {"local": "local"}
    assert parse_hostspec("unix:").is_unix
    assert parse_hostspec("unix:").attributes == {"unixsock": "unix"}


# ---- attributes --------------------------------------------------------------------------

@pytest.mark.parametrize("spec, attrs", [
    ("pcp://oss.sgi.com:45892?user=otto&pass=blotto",
     {"protocol": "pcp", "username": "otto", "password": "blotto"}),
    ("h?username=a&password=b&method=PLAIN&realm=r&authmeth=X",
     {"username": "a", "password": "b", "method": "X", "realm": "r"}),
    ("h?userauth&authorise&authorize", {"userauth": None}),
    ("h?compress", {"compress": None}),
    ("h?container=f%6fo", {"container": "foo"}),
    ("h?container=a+b", {"container": "a b"}),
    ("h?container=a%2Bb%20c", {"container": "a+b c"}),
    ("h?container=a&container=b", {"container": "b"}),   # the last one wins
    ("h?container=a/b", {"container": "a"}),             # '/' ends the attributes
    ("h?container=a=b=c", {}),                           # the name is "container=a=b"
    ("h?container=", {"container": ""}),
    ("h?container=ab%00cd", {"container": "ab"}),        # C strings end at NUL
    ("h?nosuch=1&secure=relaxed", {"secure": "relaxed"}),
    ("h?&&secure", {"secure": None}),
    ("h?uid=1&userid=2&gid=3&groupid=4&pid=5&processid=6&exclusive&unix&unixsock&local",
     {"userid": "2", "groupid": "4", "processid": "6", "exclusive": None,
      "unixsock": None, "local": None}),
    ("h?nosuch=%zz", {}),                                # unknown names are not decoded
    ("local:?user=jimbo", {"local": "local", "username": "jimbo"}),
    ("h?CONTAINER=x", {}),                               # names are case sensitive
])
def test_attributes(spec, attrs):
    assert parse_hostspec(spec).attributes == attrs


def test_non_ascii_attribute_values_round_trip():
    assert parse_hostspec("h?container=%C3%A9").attributes["container"] == "\u00e9"
    assert parse_hostspec("h?container=\u00e9").attributes["container"] == "\u00e9"


# ---- errors ----------------------------------------------------------------------------------

ERROR_CASES = [
    # spec, code, caret column, reason
    ("localhost:x", PM_ERR_GENERIC, 10, "non-numeric port"),
    ("localhost:44321x", PM_ERR_GENERIC, 15, "non-numeric port"),
    ("localhost:0x10", PM_ERR_GENERIC, 11, "non-numeric port"),
    ("bogus:localhost", PM_ERR_GENERIC, 6, "non-numeric port"),
    ("localhost:", PM_ERR_GENERIC, 10, "missing port"),
    ("localhost:1,", PM_ERR_GENERIC, 12, "missing port"),
    ("localhost:1,,2", PM_ERR_GENERIC, 12, "missing port"),
    ("local:/run/pcp/pmcd.socket:?container=x", PM_ERR_GENERIC, 26,
     "unexpected terminal character"),
    ("local:foo:", PM_ERR_GENERIC, 9, "unexpected terminal character"),
    ("@", PM_ERR_GENERIC, 0, "unexpected terminal character"),
    (":44321", PM_ERR_GENERIC, 0, "unexpected terminal character"),
    ("[fe80::1", PM_ERR_GENERIC, 8, "missing closing ']' for host spec"),
    ("[localhost]x", PM_ERR_GENERIC, 11, "extra characters after host spec"),
    ("h?container=%4", -errno.EINVAL, 12, "invalid URL encoding"),
    ("h?container=%zz", -errno.EINVAL, 12, "invalid URL encoding"),
]


@pytest.mark.parametrize("spec, code, column, reason", ERROR_CASES)
def test_parse_errors(spec, code, column, reason):
    with pytest.raises(HostSpecError) as e:
        parse_hostspec(spec)
    err = e.value
    assert isinstance(err, pmErr)
    assert err.args[0] == code
    assert err.position == column and err.reason == reason
    assert err.detail == "%s\n%s^ -- %s\n" % (spec, " " * column, reason)
    assert err.message.startswith("pmNewContext: bad host specification\n")


def test_caret_keeps_tabs_aligned():
    with pytest.raises(HostSpecError) as e:
        parse_hostspec("a\tb:x")
    assert e.value.detail.splitlines()[1] == " \t  ^ -- non-numeric port"


@pytest.mark.parametrize("spec", ["", "pcp://", "?container=x", "/foo", "pcps:///"])
def test_no_host_is_nothost(spec):
    with pytest.raises(pmErr) as e:
        parse_hostspec(spec)
    assert e.value.args[0] == PM_ERR_NOTHOST
    assert not isinstance(e.value, HostSpecError)


@pytest.mark.reference
def test_error_codes_and_messages_match_reference():
    if not os.path.exists(REFERENCE_PYTHON):
        pytest.skip("reference python3-pcp not installed")
    specs = [case[0] for case in ERROR_CASES if case[1] == PM_ERR_GENERIC]
    specs += ["pcp://", "?container=x"]
    script = (
        "import sys, json\nfrom pcp import pmapi\nout = []\n"
        "for s in json.loads(sys.argv[1]):\n"
        "    try:\n        pmapi.pmContext(1, s); out.append(0)\n"
        "    except pmapi.pmErr as e:\n        out.append(e.args[0])\n"
        "print(json.dumps(out))\n")
    res = subprocess.run([REFERENCE_PYTHON, "-I", "-c", script, json.dumps(specs)], cwd="/",
                         capture_output=True, text=True, timeout=60)
    codes = json.loads(res.stdout.strip().splitlines()[-1])
    for spec, ref in zip(specs, codes):
        try:
            parse_hostspec(spec)
            ours = 0
        except pmErr as e:
            ours = e.args[0]
        assert ours == ref, spec
        if ref == PM_ERR_GENERIC:
            # libpcp prints the same caret diagram on stderr.
            with pytest.raises(HostSpecError) as e:
                parse_hostspec(spec)
            assert e.value.message in res.stderr, spec


# ---- pmGetConfig -------------------------------------------------------------------------

def test_config_env_wins_then_pcp_conf(monkeypatch, tmp_path):
    conf = tmp_path / "pcp.conf"
    conf.write_text("# comment=ignored\nPCP_RUN_DIR=/conf/run\nPCP_AWK_PROG=\"gawk --posix\"\n"
                    "PCP_Q='x'\nPCP_EMPTY=\nPCP_DUP=first\nPCP_DUP=second\nno equals here\n"
                    "PCP_EXPAND=$PCP_RUN_DIR/x\nPCP_CR=a\r\n")
    monkeypatch.setenv("PCP_CONF", str(conf))
    assert pmGetConfig("PCP_RUN_DIR") == "/conf/run"
    assert pmGetConfig("PCP_AWK_PROG") == "gawk --posix"
    assert pmGetConfig("PCP_Q") == "x"
    assert pmGetConfig("PCP_EMPTY") == ""
    assert pmGetConfig("PCP_DUP") == "first"
    assert pmGetConfig("PCP_EXPAND") == "$PCP_RUN_DIR/x"    # libpcp does not expand
    assert pmGetConfig("PCP_CR") == "a\r"
    assert pmGetConfig("# comment") is None
    assert pmGetConfig("PCP_NOSUCH") is None
    monkeypatch.setenv("PCP_RUN_DIR", "/env/run")
    assert pmGetConfig("PCP_RUN_DIR") == "/env/run"
    assert pmGetConfig(b"PCP_RUN_DIR") == "/env/run"
    assert parse_hostspec("local:").unix_path == "/env/run/pmcd.socket"


def test_config_pcp_dir_and_rereads_changes(monkeypatch, tmp_path):
    (tmp_path / "etc").mkdir()
    conf = tmp_path / "etc" / "pcp.conf"
    conf.write_text("PCP_RUN_DIR=/a\n")
    monkeypatch.setenv("PCP_DIR", str(tmp_path))
    assert pmGetConfig("PCP_RUN_DIR") == "/a"
    conf.write_text("PCP_RUN_DIR=/bb\n")
    assert pmGetConfig("PCP_RUN_DIR") == "/bb"
    monkeypatch.setenv("PCP_CONF", str(tmp_path / "missing.conf"))
    assert pmGetConfig("PCP_RUN_DIR") is None
    assert read_pcp_conf() == {}


@pytest.mark.reference
def test_config_matches_reference():
    if not os.path.exists(REFERENCE_PYTHON) or not os.path.exists("/etc/pcp.conf"):
        pytest.skip("reference python3-pcp not installed")
    names = ["PCP_RUN_DIR", "PCP_AWK_PROG", "PCP_ECHO_C", "PCP_VERSION", "PCP_NOSUCH_X"]
    script = ("import json, sys\nfrom pcp import pmapi\n"
              "names = json.loads(sys.argv[1])\n"
              "print(json.dumps([pmapi.pmContext.pmGetConfig(n) for n in names]))")
    env = {k: v for k, v in os.environ.items() if not k.startswith("PCP_")}
    res = subprocess.run([REFERENCE_PYTHON, "-I", "-c", script, json.dumps(names)], cwd="/",
                         env=env, capture_output=True, text=True, timeout=60)
    assert json.loads(res.stdout) == [pmGetConfig(n) for n in names]
