import sys

from kingdomino.cli import main

sys.exit(main())
