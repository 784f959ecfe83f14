from psp_st.cli import main

raise SystemExit(main())
