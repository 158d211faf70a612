import sys

from kingdomino.cli import main

if __name__ == "__main__":  # not when a worker process (spawn/forkserver) imports this module
    sys.exit(main())
