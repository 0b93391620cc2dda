"""``python -m zooport.cli``: the ``zooport`` command line."""

from zooport.cli.app import main

raise SystemExit(main())
