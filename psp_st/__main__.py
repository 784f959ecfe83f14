from __future__ import annotations

import sys

from psp_st.cli import main

sys.exit(main())
