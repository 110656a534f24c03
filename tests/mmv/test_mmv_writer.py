"""pcp.mmv against the official binding (libpcp_mmv 6.0.3): the same program writes the
same file, byte for byte but for the generation numbers and the process id, and gets
the same answers, the same exceptions and the same values after every update."""
from __future__ import annotations

import pytest

from support.mmvdiff import run_both
from support import difftest

pytestmark = pytest.mark.reference

ACME = r'''
insts = [mmv.mmv_instance(0, "Anvils"), mmv.mmv_instance(1, "Rockets"),
         mmv.mmv_instance(2, "Giant_Rubber_Bands"), mmv.mmv_instance(3, "i" * 64)]
indoms = [mmv.mmv_indom(serial=61, shorttext="Acme products",
                        helptext="Most popular products"),
          mmv.mmv_indom(serial=62, shorttext=None), mmv.mmv_indom(serial=63)]
indoms[0].set_instances(insts)
indoms[1].set_instances(insts[:1])
indoms[1].helptext = b"help set afterwards"
metrics = [
    mmv.mmv_metric(name="products.count", item=7, typeof=cmmv.MMV_TYPE_U64,
                   semantics=cmmv.MMV_SEM_COUNTER,
                   dimension=pmapi.pmUnits(0, 0, 1, 0, 0, cpmapi.PM_COUNT_ONE),
                   indom=61, shorttext="Acme factory product throughput",
                   helptext="Monotonic increasing counter of products"),
    mmv.mmv_metric(name="products.time", item=8, typeof=cmmv.MMV_TYPE_U64,
                   semantics=cmmv.MMV_SEM_COUNTER,
                   dimension=pmapi.pmUnits(0, 1, 0, 0, cpmapi.PM_TIME_USEC, 0),
                   indom=61, shorttext="Machine time spent producing Acme products"),
    mmv.mmv_metric(name="status", item=9, typeof=cmmv.MMV_TYPE_STRING, semantics=0,
                   dimension=pmapi.pmUnits(), shorttext=None),
    mmv.mmv_metric(name="n" * 64, item=10, typeof=cmmv.MMV_TYPE_ELAPSED, semantics=0,
                   dimension=pmapi.pmUnits(), shorttext="h" * 300),
    mmv.mmv_metric(name="ratio", item=11, typeof=cmmv.MMV_TYPE_FLOAT, semantics=3,
                   dimension=pmapi.pmUnits(), indom=62),
    mmv.mmv_metric(name="small", item=12, typeof=cmmv.MMV_TYPE_I32, semantics=0,
                   dimension=pmapi.pmUnits(), indom=0xFFFFFFFF),
    mmv.mmv_metric(name="labels", item=13, typeof=cmmv.MMV_TYPE_STRING, semantics=0,
                   dimension=pmapi.pmUnits(), indom=61),
    mmv.mmv_metric(name="none", item=14, typeof=cmmv.MMV_TYPE_DOUBLE, semantics=0,
                   dimension=pmapi.pmUnits(), indom=63),
]
# fields set after the constructor (which drops semantics and dimension) do count
metrics[1].semantics = cmmv.MMV_SEM_COUNTER
metrics[1].dimension = pmapi.pmUnits(0, 1, 0, 0, cpmapi.PM_TIME_USEC, 0)
metrics[4].helptext = None
'''


def test_layout_and_updates_match_byte_for_byte():
    ours, ref = run_both(ACME + r'''
values = mmv.MemoryMappedValues(PATH, flags=cmmv.MMV_FLAG_SENTINEL, cluster=123)
values.add_indoms(indoms)
values.add_metrics(metrics)
RESULT["before"] = values.started()
values.start()
RESULT["started"] = values.started()
RESULT["mode"] = oct(os.stat(PATH).st_mode)
RESULT["layout"] = snap()
anvils = values.lookup_mapping("products.count", "Anvils")
RESULT["mapping"] = [type(anvils).__name__, bool(anvils)]
values.set(anvils, 41)
values.inc(anvils)
values.add(anvils, 2.7)
values.add(anvils, -1)
RESULT["contents"] = anvils.contents.ull
values.set_string(values.lookup_mapping("status", None), "hello")
values.lookup_set_string("status", "ignored for a singular metric", "world!")
values.lookup_set_string("labels", "Rockets", "r" * 254)
values.lookup_set_string("labels", "Anvils", "too long " * 40)
values.lookup_set_string(b"labels", b"Giant_Rubber_Bands", b"nul\x00inside")
values.lookup_add_fallback("products.count", "nope", b"Rockets", 5)
values.lookup_inc_fallback("ratio", "nope", b"Anvils")
values.lookup_add("ratio", "Anvils", 0.1)
values.lookup_add("ratio", "Anvils", 0.1)
values.lookup_set("small", "whatever", 2 ** 40)
values.lookup_inc("small", None)
values.lookup_inc("products.time", "i" * 63)
values.lookup_inc("products.time", "i" * 64)
RESULT["updated"] = snap()
values.stop()
RESULT["after_stop"] = [values.started(), os.path.exists(PATH)]
values.inc(anvils)
values.lookup_inc("small", None)
RESULT["stopped"] = snap()
''')
    difftest.assert_equal(ours, ref)


def test_restart_add_metric_and_process_flag():
    ours, ref = run_both(ACME + r'''
values = mmv.MemoryMappedValues(PATH, flags=cmmv.MMV_FLAG_PROCESS)
values.add_metrics(metrics[2:4])
values.add_metric(metrics[5])       # not started: no file yet
RESULT["early"] = os.path.exists(PATH)
values.start()
values.lookup_set("small", None, -5)
RESULT["first"] = snap()
values.add_indoms(indoms)           # started: restarts, values start from zero
values.add_metric(metrics[0])
RESULT["restarted"] = [values.started(), snap()]
values.lookup_inc("products.count", "Rockets")
values.restart()
RESULT["again"] = snap()
values.stop()
RESULT["gone"] = os.path.exists(PATH)     # MMV_FLAG_PROCESS: stop() unlinks
values.stop()
RESULT["twice"] = values.started()
values = mmv.MemoryMappedValues(PATH)
values.add_metrics([metrics[2], metrics[3], metrics[5]])
values.start()
old = values.lookup_mapping("small", None)
values.start()                      # started again without a stop: a new file
values.inc(old)                     # the old mapping writes into the old (unlinked) one
values.lookup_inc("small", None)
RESULT["start_twice"] = [old.contents.l, snap()]
''')
    difftest.assert_equal(ours, ref)


CHANGES = [
    "indoms[0].serial = 0",
    "indoms[0].serial = 0xFFFFFFFF",
    "indoms[0].shorttext = b'x' * 256",
    "indoms[0].helptext = b'x' * 300",
    "metrics[0].name = b''",
    "metrics[0].typeof = 10",
    "metrics[0].typeof = -2",
    "metrics[0].indom = 99",
    # accepted by libpcp_mmv (the PMDA may still refuse them)
    "metrics[0].typeof = 7",
    "metrics[0].typeof = -1",
    "metrics[1].name = metrics[0].name",
    "metrics[1].item = metrics[0].item",
    "metrics[0].name = b'bad name!'",
    "metrics[0].shorttext = b'x' * 255",
    "indoms[0].shorttext = b'x' * 255",
    "insts[0].external = b''; indoms[0].set_instances(insts)",
    "indoms.append(mmv.mmv_indom(serial=61, shorttext='again'))",
    "metrics[0].indom = 0",
    "metrics[:] = []",
    "indoms[:] = []; metrics[:] = [m for m in metrics if m.indom in (0, 0xFFFFFFFF)]",
]


def test_accepted_and_refused_definitions():
    """Each change to the ACME definitions, in one program per side (a refused one
    makes no file and start() says nothing)."""
    ours, ref = run_both(r'''
ACME = %r
for change in %r:
    scope = {"mmv": mmv, "cmmv": cmmv, "pmapi": pmapi, "cpmapi": cpmapi}
    exec(ACME + change, scope)
    if os.path.exists(PATH):
        os.unlink(PATH)
    values = mmv.MemoryMappedValues(PATH)
    values.add_indoms(scope["indoms"])
    values.add_metrics(scope["metrics"])
    values.start()
    RESULT[change] = [values.started(), snap() if os.path.exists(PATH) else None,
                      catch(values.lookup_mapping, "products.count", "Anvils")]
    values.lookup_inc("products.count", "Anvils")
    values.stop()
''' % (ACME, CHANGES))
    difftest.assert_equal(ours, ref)
    assert sum(1 for started, _, _ in ref.values() if started) == 12


def test_constructors_and_over_long_names():
    ours, ref = run_both(r'''
RESULT["metric"] = catch(mmv.mmv_metric, "x" * 65, 1, 3, 1, pmapi.pmUnits())
RESULT["instance"] = catch(mmv.mmv_instance, 1, "y" * 65)
RESULT["name64"] = catch(mmv.mmv_metric, "x" * 64, 1, 3, 1, pmapi.pmUnits())
m = mmv.mmv_metric("a", 1, cmmv.MMV_TYPE_U64, cmmv.MMV_SEM_COUNTER,
                   pmapi.pmUnits(1, 2, 3, 4, 5, 6), 7, "short", "long")
RESULT["fields"] = [m.name, m.item, m.typeof, m.semantics, bytes(m.dimension).hex(),
                    m.indom, m.shorttext, m.helptext]
RESULT["fields"] = [x.decode() if isinstance(x, bytes) else x for x in RESULT["fields"]]
d = mmv.mmv_indom(5, "s", "l")
RESULT["indom"] = [d.serial, d.count, bool(d.instances), d.shorttext.decode(),
                   d.helptext.decode()]
d.set_instances([mmv.mmv_instance(4, "four"), mmv.mmv_instance(9, b"nine")])
RESULT["instances"] = [d.count, d.instances[1].internal, d.instances[1].external.decode()]
RESULT["nones"] = [mmv.mmv_indom(1, None, None).helptext, mmv.mmv_metric(
    b"b", 1, 1, 1, None, shorttext=None).helptext]
RESULT["cmmv"] = {k: getattr(cmmv, k) for k in dir(cmmv) if k.startswith("MMV_")}
''')
    difftest.assert_equal(ours, ref)


VALUE_OPS = r'''
TYPES = {"i32": cmmv.MMV_TYPE_I32, "u32": cmmv.MMV_TYPE_U32, "i64": cmmv.MMV_TYPE_I64,
         "u64": cmmv.MMV_TYPE_U64, "float": cmmv.MMV_TYPE_FLOAT,
         "double": cmmv.MMV_TYPE_DOUBLE, "elapsed": cmmv.MMV_TYPE_ELAPSED,
         "string": cmmv.MMV_TYPE_STRING, "seven": 7}
metrics = [mmv.mmv_metric(name=n, item=i, typeof=t, semantics=1, dimension=pmapi.pmUnits())
           for i, (n, t) in enumerate(TYPES.items(), 1)]
values = mmv.MemoryMappedValues(PATH)
values.add_metrics(metrics)
values.start()
NUMBERS = [0, 1, -1, 2.7, -2.7, 0.1, 1e-45, True, 2 ** 31 - 1, 2 ** 31, -2 ** 31 - 1,
           2 ** 32 + 5, -2 ** 32 - 5, 2 ** 53 + 1, 2 ** 60 + 3, -2 ** 60 - 3, 2 ** 63,
           2 ** 63 + 4096, -2 ** 63, 2 ** 64, 2 ** 64 + 8192, 1e30, -1e30, 3.4e38, 1e39,
           float("nan"), float("inf"), float("-inf"), 16777217, -0.0]
import random
_rng = random.Random(27)
for _ in range(60):     # seeded numbers of every magnitude, integers and fractions
    scale = 2.0 ** _rng.randint(-30, 70)
    number = _rng.uniform(-scale, scale)
    NUMBERS.append(int(number) if _rng.random() < 0.5 else number)

def word(name):
    mapping = values.lookup_mapping(name, None)
    off = ctypes.addressof(mapping.contents)
    return ctypes.string_at(off, 16).hex()

for name in TYPES:
    mapping = values.lookup_mapping(name, None)
    trail = []
    for number in NUMBERS:
        values.set(mapping, number)
        trail.append(word(name))
        values.add(mapping, number)
        trail.append(word(name))
        values.inc(mapping)
        trail.append(word(name))
        values.lookup_add(name, None, number)
        trail.append(word(name))
        values.lookup_set(name, None, number)
        values.lookup_inc(name, None)
        trail.append(word(name))
    RESULT[name] = trail
'''


def test_value_arithmetic_of_every_type():
    """Every type through set/add/inc of numbers at and beyond its limits: the same
    16 bytes (value and extra) after each step."""
    ours, ref = run_both(VALUE_OPS)
    difftest.assert_equal(ours, ref)


def test_wraparounds():
    ours, ref = run_both(r'''
metrics = [mmv.mmv_metric(name=n, item=i, typeof=t, semantics=1, dimension=pmapi.pmUnits())
           for i, (n, t) in enumerate([("i32", 0), ("u32", 1), ("i64", 2), ("u64", 3)], 1)]
values = mmv.MemoryMappedValues(PATH)
values.add_metrics(metrics)
values.start()
for name, top in [("i32", 2 ** 31 - 1), ("u32", 2 ** 32 - 1), ("i64", 2 ** 53),
                  ("u64", 2 ** 53)]:
    m = values.lookup_mapping(name, None)
    values.set(m, top)
    values.inc(m)
    values.add(m, -3)
    values.add(m, 2 ** 52)
    values.set(m, -1)
    values.inc(m)
    values.inc(m)
RESULT["file"] = snap()
''')
    difftest.assert_equal(ours, ref)


def test_exceptions_match():
    ours, ref = run_both(ACME + r'''
values = mmv.MemoryMappedValues(PATH)
values.add_indoms(indoms)
values.add_metrics(metrics)
m = values.lookup_mapping("products.count", "Anvils")
RESULT["before_start"] = [catch(values.inc, m), catch(values.lookup_inc, "x", None),
                          bool(m), catch(values.lookup_interval_start, "status", None)]
values.start()
m = values.lookup_mapping("products.count", "Anvils")
RESULT["calls"] = [
    catch(values.add, m, "x"), catch(values.add, m, None), catch(values.add, m, 2 ** 1100),
    catch(values.set, m, "1"), catch(values.inc, 5), catch(values.add, "m", 1),
    catch(values.interval_start, m), catch(values.interval_start, 5),
    catch(values.interval_end, None), catch(values.interval_end, 7),
    catch(values.lookup_inc_fallback, "products.count", "x", "Anvils"),
    catch(values.lookup_inc_fallback, "products.count", "x", 5),
    catch(values.lookup_add_fallback, "products.count", "x", b"Anvils", "1"),
    catch(values.lookup_add_fallback, "products.count", "x", "Anvils", 1),
    catch(values.lookup_add, "products.count", "Anvils", "x"),
    catch(values.lookup_set, "products.count", "Anvils", None),
    catch(values.lookup_mapping, 5, None), catch(values.lookup_mapping, "a", 5),
    catch(values.lookup_inc, bytearray(b"a"), None),
    catch(values.set_string, values.lookup_mapping("status", None), None),
    catch(values.set_string, values.lookup_mapping("status", None), 5),
    catch(values.set_string, 5, "x"),
    catch(values.lookup_set_string, "status", None, None),
    catch(values.lookup_interval_start, "nope", None),
    catch(values.lookup_interval_start, None, None),
    catch(values.lookup_mapping, "products.count", None),
    catch(values.lookup_mapping, "status", "anything"),
    catch(values.lookup_mapping, None, "Anvils"),
    catch(values.lookup_mapping, "products.count\x00junk", "Anvils\x00junk"),
]
RESULT["file"] = snap()
''')
    difftest.assert_equal(ours, ref)


def test_intervals():
    """lookup_interval_start keeps minus "now" aside (an elapsed metric's extra) or adds
    it (other types); interval_end adds "now": both sides measure about the sleep."""
    ours, ref = run_both(r'''
metrics = [mmv.mmv_metric(name=n, item=i, typeof=t, semantics=1, dimension=pmapi.pmUnits())
           for i, (n, t) in enumerate([("e", 9), ("u", 3), ("d", 5), ("s", 6)], 1)]
values = mmv.MemoryMappedValues(PATH)
values.add_metrics(metrics)
values.start()
marks = {name: values.lookup_interval_start(name, None) for name in "euds"}
e = values.lookup_mapping("e", None)
extra = ctypes.c_int64.from_address(ctypes.addressof(e.contents) + 8).value
RESULT["started"] = [-extra > 1.6e15, e.contents.ll]
time.sleep(0.05)
for name in "euds":
    RESULT[name + "_end"] = catch(values.interval_end, marks[name])
RESULT["elapsed"] = [50000 <= values.lookup_mapping(n, None).contents.ll < 5000000
                     for n in "eu"]
RESULT["double"] = 0.05e6 <= values.lookup_mapping("d", None).contents.d < 5e6
values.inc(e)
RESULT["extra_after_inc"] = ctypes.c_int64.from_address(ctypes.addressof(e.contents) + 8).value
values.set(e, 5)
RESULT["after_set"] = e.contents.ll
RESULT["missing"] = catch(values.lookup_interval_start, "nope", None)
''')
    difftest.assert_equal(ours, ref)


def test_relative_name_goes_under_pcp_tmp_dir():
    ours, ref = run_both(r'''
tmp = os.environ["MMV_TEST_DIR"]
os.mkdir(os.path.join(tmp, "mmv"))
os.umask(0o077)
values = mmv.MemoryMappedValues("rel", flags=cmmv.MMV_FLAG_NOPREFIX)
values.add_metrics([mmv.mmv_metric("x", 1, 3, 1, pmapi.pmUnits())])
values.start()
where = os.path.join(tmp, "mmv", "rel")
RESULT["made"] = [values.started(), oct(os.stat(where).st_mode), snap(where)]
values.stop()
values2 = mmv.MemoryMappedValues("missing/dir")
values2.add_metrics([mmv.mmv_metric("x", 1, 3, 1, pmapi.pmUnits())])
values2.start()
RESULT["no_dir"] = [values2.started(), catch(values2.lookup_inc, "x", None)]
''', env={"PCP_TMP_DIR": "%(dir)s"}, name="unused")
    difftest.assert_equal(ours, ref)
