from bench.distill_quality.run import main

raise SystemExit(main())
