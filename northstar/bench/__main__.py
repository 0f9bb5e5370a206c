"""``python -m northstar.bench``: the run benchmark suite (see ``northstar.bench.run_bench``).

Guarded, because the package's public-surface test imports every module of the core.
"""

import sys

from northstar.bench.run_bench import main

if __name__ == "__main__":
    sys.exit(main())
