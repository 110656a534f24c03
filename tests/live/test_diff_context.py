"""Differential tests: pmContext creation for host targets, context
attributes, host names, duplication, reconnection and failures."""

import pytest

from support.difftest import Pair

pytestmark = [pytest.mark.pmcd, pytest.mark.reference]

SNIPPET = r'''
R = {}
def ctx_image(*args, **kw):
    c = pmapi.pmContext(*args, **kw)
    img = {"type": c.type, "target": jsonable(c.target), "ctx_type": tname(c.ctx),
           "hostname": c.pmGetContextHostName(),
           "hostname_type": tname(c.pmGetContextHostName()),
           "works": list(c.pmLookupName("sample.long.one"))}
    KEEP.append(c)
    return img
KEEP = []
# handle numbering in a fresh process: contexts kept alive, no destruction
def numbering():
    a = pmapi.pmContext()
    b = pmapi.pmContext(c_api.PM_CONTEXT_HOST, "local:")
    d = b.pmDupContext()
    w = P.pmWhichContext()
    KEEP.extend([a, b])
    return {"a": a.ctx, "b": b.ctx, "dup": d, "which_after_dup": w,
            "reconnect_a": a.pmReconnectContext(), "which_after_reconnect": P.pmWhichContext()}
R["handle_numbering"] = catch(numbering)
R["default_target"] = catch(ctx_image)
R["local"] = catch(ctx_image, c_api.PM_CONTEXT_HOST, "local:")
R["localhost"] = catch(ctx_image, c_api.PM_CONTEXT_HOST, "localhost")
R["unix"] = catch(ctx_image, c_api.PM_CONTEXT_HOST, "unix:")
R["loopback_ip"] = catch(ctx_image, c_api.PM_CONTEXT_HOST, "127.0.0.1")
R["bytes_target"] = catch(ctx_image, c_api.PM_CONTEXT_HOST, b"local:")
R["keyword_args"] = catch(lambda: ctx_image(typed=c_api.PM_CONTEXT_HOST, target="localhost"))
R["refused_port"] = catch(pmapi.pmContext, c_api.PM_CONTEXT_HOST, "127.0.0.1:1")
R["bad_context_type"] = catch(pmapi.pmContext, 99, "local:")
R["none_target"] = catch(pmapi.pmContext, c_api.PM_CONTEXT_HOST, None)
R["empty_target"] = catch(pmapi.pmContext, c_api.PM_CONTEXT_HOST, "")
R["missing_archive"] = catch(pmapi.pmContext, c_api.PM_CONTEXT_ARCHIVE, "/nonexistent/pcp/archive")
R["constants"] = [c_api.PM_CONTEXT_HOST, c_api.PM_CONTEXT_ARCHIVE, c_api.PM_CONTEXT_LOCAL,
                  c_api.PM_ERR_NOCONTEXT]

c = pmapi.pmContext()
KEEP.append(c)
R["dup_context_type"] = catch(lambda: tname(c.pmDupContext()))
R["reconnect_type"] = catch(lambda: tname(c.pmReconnectContext()))
R["which_context_type"] = catch(lambda: tname(P.pmWhichContext()))
R["two_contexts_independent"] = catch(lambda: [list(pmapi.pmContext().pmLookupName("sample.bin")),
                                               list(c.pmLookupName("sample.bin"))])
# libpcp calls the official binding never exposed, which pcp-native adds (tested in
# test_events_*.py); the official binding must not have them, the rest must match.
EXTENSIONS = {"pmUnpackEventRecords", "pmUnpackHighResEventRecords", "pmFreeEventResult",
              "pmFreeHighResEventResult"}
R["methods"] = catch(lambda: sorted(n for n in dir(pmapi.pmContext)
                                    if n.startswith("pm") and n not in EXTENSIONS))
R["extensions_present"] = sorted(n for n in EXTENSIONS if hasattr(pmapi.pmContext, n))
R["pmns_location"] = catch(c.pmGetPMNSLocation)
R["pmns_location_constants"] = [c_api.PMNS_LOCAL, c_api.PMNS_REMOTE, c_api.PMNS_ARCHIVE]
R["noop_methods"] = catch(lambda: [jsonable(c.pmNewContext(c_api.PM_CONTEXT_HOST, "local:")),
                     jsonable(c.pmDestroyContext(c.ctx)), jsonable(c.pmUseContext(c.ctx))])
RESULT = R
'''


@pytest.fixture(scope="module")
def pair(pmcd, reference_binding):
    return Pair(SNIPPET)


def test_context_handle_numbering_dup_and_reconnect(pair):
    pair.check("handle_numbering")


def test_context_default_target(pair):
    ref = pair.check("default_target")
    assert ref["target"] == "local:" and ref["type"] == 1


def test_context_local(pair):
    pair.check("local")


def test_context_localhost(pair):
    pair.check("localhost")


def test_context_unix_socket(pair):
    pair.check("unix")


def test_context_loopback_ip(pair):
    pair.check("loopback_ip")


def test_context_bytes_target_kept_as_bytes(pair):
    pair.check("bytes_target")


def test_context_keyword_arguments(pair):
    pair.check("keyword_args")


def test_context_connection_refused(pair):
    ref = pair.check("refused_port")
    assert ref["error"] == -111 and ref["args"][1] == ["127.0.0.1:1"]


def test_context_bad_type(pair):
    pair.check("bad_context_type")


def test_context_none_target(pair):
    pair.check("none_target")


def test_context_empty_target(pair):
    """Reference quirk: "" is falsy so it is not encoded, and ctypes then
    rejects the str argument with ctypes.ArgumentError; ours raises the same."""
    ref = pair.ref_section("empty_target")
    assert ref["exception"] == "ArgumentError"
    pair.check("empty_target")


def test_context_missing_archive(pair):
    # archives are not supported by ours, but the failure must look the same
    pair.check("missing_archive")


def test_context_constants(pair):
    pair.check("constants")


def test_dup_reconnect_which_return_int(pair):
    pair.check("dup_context_type")
    pair.check("reconnect_type")
    pair.check("which_context_type")


def test_two_contexts_independent(pair):
    pair.check("two_contexts_independent")


def test_context_method_names(pair):
    pair.check("methods")


def test_event_unpack_calls_are_our_only_additions(pair):
    ref, ours = pair.ref_section("extensions_present"), pair.ours_section("extensions_present")
    assert ref == []
    assert ours == ["pmFreeEventResult", "pmFreeHighResEventResult",
                    "pmUnpackEventRecords", "pmUnpackHighResEventRecords"]


def test_pmns_location(pair):
    pair.check("pmns_location")
    pair.check("pmns_location_constants")


def test_noop_context_methods(pair):
    pair.check("noop_methods")
