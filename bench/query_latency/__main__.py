from bench.query_latency.run import main

raise SystemExit(main())
