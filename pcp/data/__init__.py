"""Data shipped with the package: a small pmlogger archive (10 s of sample and linux
metrics, xz-compressed), for examples and for the CLI's --demo."""
import os

#: the bundled archive's base name, as pmNewContext and the bulk readers take it
DEMO_ARCHIVE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo")
