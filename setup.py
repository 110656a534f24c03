"""Build script: setuptools plus the one cffi build definition in csrc/build_ffi.py."""
from setuptools import setup

setup(cffi_modules=["csrc/build_ffi.py:ffibuilder"])
