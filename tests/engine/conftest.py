import sys
from pathlib import Path

# Let the engine tests import their helpers module.
sys.path.insert(0, str(Path(__file__).resolve().parent))
