"""Every public function and class of pcp.bulk, pcp.sampler, pcp.fleet and pcp.dask (the
names of their __all__), and every public method and property of those classes, has a
docstring (issue 18 §5)."""
from __future__ import annotations

import importlib
import inspect

import pytest

MODULES = ["pcp.bulk", "pcp.sampler", "pcp.fleet", "pcp.dask"]


def _public(modname):
    try:
        module = importlib.import_module(modname)
    except ImportError as e:            # pcp.dask needs the dask extra
        pytest.skip("%s: %s" % (modname, e))
    for name in module.__all__:
        obj = getattr(module, name)
        yield "%s.%s" % (modname, name), obj
        if inspect.isclass(obj):
            for attr, value in vars(obj).items():
                if attr.startswith("_"):
                    continue
                if isinstance(value, (staticmethod, classmethod)):
                    value = value.__func__
                if isinstance(value, property):
                    value = value.fget
                if inspect.isfunction(value):
                    yield "%s.%s.%s" % (modname, name, attr), value


@pytest.mark.parametrize("modname", MODULES)
def test_public_api_has_docstrings(modname):
    found = list(_public(modname))
    assert found
    missing = [name for name, obj in found if not (inspect.getdoc(obj) or "").strip()]
    assert missing == []
