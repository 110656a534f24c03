"""`python -m pcp`: the pcp-native command line (see pcp.cli)."""
import sys

from pcp.cli import main

sys.exit(main())
