from truffle_assets.cli import main

raise SystemExit(main())
