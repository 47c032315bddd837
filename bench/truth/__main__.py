import sys

from bench.truth.run import main

sys.exit(main())
