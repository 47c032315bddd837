from bench.distill.run import main

raise SystemExit(main())
