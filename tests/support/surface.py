"""The public-name surface of the binding's modules, as one program any interpreter runs.

``SURFACE_PROGRAM`` imports each module of ``MODULES`` and prints, as its last line, one
JSON object: module -> public name -> a description that is equal on two bindings
exactly when a script sees the same thing:

* a constant (int, float, str, bytes, bool, None): its type and value;
* a dict, list or tuple of constants: its type and items (cpmapi's and cpmi's tables);
* a class: ``class`` and its public attributes (inherited ones too), each described
  as a function (with its parameters, when the function is written in Python), a
  property, a nested class or a constant;
* a function: ``function`` and its parameters (names, kinds and defaults) when it is
  written in Python; a builtin (a C module's) has no signature to compare;
* a module: ``module`` and its name.

A module that fails to import is ``{"__import_error__": text}``.
:func:`differences` lists where two surfaces part, one line each.
"""
from __future__ import annotations

from typing import Dict, Iterable, List

#: Every module of the official binding this package offers.
MODULES = ("pcp.pmapi", "cpmapi", "pcp.pmcc", "pcp.pmconfig", "pcp.pmi", "cpmi",
           "pcp.pmda", "cpmda", "pcp.mmv", "cmmv")

SURFACE_PROGRAM = r'''
import importlib, inspect, json, sys, types

MODULES = %(modules)r

def constant(value, depth=0):
    if value is None or isinstance(value, (bool, int, float, str)):
        return [type(value).__name__, value]
    if isinstance(value, bytes):
        return ["bytes", value.decode("latin-1")]
    if depth < 2 and isinstance(value, (list, tuple)):
        items = [constant(v, depth + 1) for v in value]
        if all(i is not None for i in items):
            return [type(value).__name__, items]
    if depth < 2 and isinstance(value, dict):
        items = sorted([constant(k, depth + 1), constant(v, depth + 1)]
                       for k, v in value.items())
        if all(k is not None and v is not None for k, v in items):
            return ["dict", items]
    return None

def parameters(function):
    if not WITH_SIGNATURES:
        return None
    code = getattr(function, "__code__", None)
    if code is None:
        return None
    try:
        signature = inspect.signature(function)
    except (TypeError, ValueError):
        return None
    out = []
    for p in signature.parameters.values():
        default = None
        if p.default is not p.empty:
            default = constant(p.default) or ["object", type(p.default).__name__]
        out.append([p.name, str(p.kind), default])
    return out

def ours(value):
    """Whether a binding defines this object (else it imports it from Python's library,
    whose objects change from one Python to the next)."""
    return (getattr(value, "__module__", None) or "").startswith(("pcp", "cpm", "cmmv"))

def describe(value, owner_is_class=False, depth=0):
    if getattr(value, "__module__", None) == "typing":
        return {"typing": True}
    if isinstance(value, types.ModuleType):
        return {"module": value.__name__}
    if isinstance(value, (staticmethod, classmethod)):
        value = value.__func__
    if isinstance(value, property):
        return {"attribute": True}
    if isinstance(value, type) and value.__name__.startswith("LP_"):
        # a ctypes pointer type (whose module a Python 3.14 names differently)
        return {"pointer": value.__name__}
    if isinstance(value, type):
        if depth > 0:
            return {"class": True}
        if not ours(value):
            # a class the module imports (ctypes', datetime's ...): its members are the
            # interpreter's business, not the binding's
            return {"class": "%%s.%%s" %% (value.__module__, value.__qualname__)}
        members = {}
        for name in dir(value):
            if name.startswith("_"):
                continue
            try:
                raw = inspect.getattr_static(value, name)
            except AttributeError:
                continue
            # a ctypes field, a property or a slot: an attribute of the instances
            # (results are lazy views here, ctypes structures there)
            if type(raw).__name__ in ("CField", "getset_descriptor", "member_descriptor") \
                    or isinstance(raw, property):
                members[name] = {"attribute": True}
            else:
                if hasattr(type(raw), "__get__") and ours(type(raw)):
                    raw = getattr(value, name)  # a binding's own descriptor: what it gives
                members[name] = describe(raw, True, depth + 1)
        return {"class": value.__name__, "members": members}
    if callable(value):
        return {"function": parameters(value) if ours(value) else None}
    shown = constant(value)
    if shown is not None:
        return {"constant": shown}
    return {"object": type(value).__name__}

surface = {}
for module_name in MODULES:
    # the official C modules' functions have no Python signature to compare
    WITH_SIGNATURES = module_name.startswith("pcp.")
    try:
        module = importlib.import_module(module_name)
    except Exception as error:
        surface[module_name] = {"__import_error__": "%%s: %%s" %% (type(error).__name__, error)}
        continue
    names = {}
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        try:
            names[name] = describe(getattr(module, name))
        except Exception as error:
            names[name] = {"error": "%%s: %%s" %% (type(error).__name__, error)}
    surface[module_name] = names
print(json.dumps(surface, sort_keys=True))
'''


def program(modules: Iterable[str] = MODULES) -> str:
    """The surface program for these modules."""
    return SURFACE_PROGRAM % {"modules": tuple(modules)}


def _walk(path: str, ours, ref, out: List[str]) -> None:
    if isinstance(ours, dict) and isinstance(ref, dict):
        for key in sorted(set(ours) | set(ref)):
            where = "%s.%s" % (path, key) if path else key
            if key not in ours:
                out.append("%s: missing (reference: %s)" % (where, _short(ref[key])))
            elif key not in ref:
                out.append("%s: extra (ours: %s)" % (where, _short(ours[key])))
            else:
                _walk(where, ours[key], ref[key], out)
        return
    if ours != ref:
        out.append("%s: ours %s, reference %s" % (path, _short(ours), _short(ref)))


def _short(value) -> str:
    import json
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= 160 else text[:157] + "..."


def differences(ours: Dict, ref: Dict) -> List[str]:
    """Every place two surfaces part, as "module.name[.member...]: what" lines, sorted."""
    out: List[str] = []
    _walk("", ours, ref, out)
    return out


def _union(surfaces):
    """The names any of these surfaces has: module -> name -> (member names or None)."""
    names: Dict[str, Dict[str, set]] = {}
    for surface in surfaces:
        for module, entries in surface.items():
            into = names.setdefault(module, {})
            for name, description in entries.items():
                members = into.setdefault(name, set())
                if isinstance(description, dict) and "members" in description:
                    members.update(description["members"])
    return names


def restricted(surface: Dict, universe: Dict[str, Dict[str, set]]) -> Dict:
    """The part of a surface that the references name: every module, name and class member
    some reference version has (this package's own additions are not a level's business)."""
    out: Dict = {}
    for module, entries in surface.items():
        known = universe.get(module, {})
        if "__import_error__" in entries:
            out[module] = entries
            continue
        kept = {}
        for name, description in entries.items():
            if name not in known:
                continue
            if isinstance(description, dict) and "members" in description:
                description = dict(description)
                description["members"] = {member: shown for member, shown
                                          in description["members"].items()
                                          if member in known[name]}
            kept[name] = description
        out[module] = kept
    return out


def level_differences(ours: Dict, ref: Dict, references: Iterable[Dict]) -> List[str]:
    """Where this package at a level parts from that level's reference, over the names of
    every reference version: a name of another version that this one lacks is an extra."""
    universe = _union(references)
    return differences(restricted(ours, universe), ref)
