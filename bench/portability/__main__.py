from bench.portability.run import main

raise SystemExit(main())
