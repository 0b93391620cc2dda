"""``python -m zooport``: the ``zooport`` command line."""

from zooport.cli import main

raise SystemExit(main())
