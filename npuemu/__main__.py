from npuemu.cli import main

raise SystemExit(main())
