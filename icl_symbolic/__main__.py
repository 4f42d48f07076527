import sys

from icl_symbolic.cli import main

sys.exit(main())
