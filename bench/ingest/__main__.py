from bench.ingest.run import main

raise SystemExit(main())
