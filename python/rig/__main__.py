"""python -m rig: progrun's check, dump and local run (rig/cli.py)."""
import sys

from .cli import main

sys.exit(main())
