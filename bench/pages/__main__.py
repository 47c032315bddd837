from bench.pages.run import main

raise SystemExit(main())
