"""PMDA help files (newhelp's .dir/.pag pair): not read yet; a PMDA whose help file is
readable gets PM_ERR_TEXT for every text, with libpcp_pmda's warning when the pair is
missing."""
from __future__ import annotations

import errno
import os
from typing import Dict, Optional, Tuple


def read_help(base: str) -> Tuple[Optional[Dict], int]:
    """(texts, 0) or (None, -errno) as pmdaOpenHelp would fail."""
    for suffix in (".dir", ".pag"):
        if not os.access(base + suffix, os.R_OK):
            return None, -errno.ENOENT
    return {}, 0
