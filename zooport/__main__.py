"""``python -m zooport``: the ``zooport`` command line (:mod:`zooport.cli`)."""

from zooport.cli.app import main

raise SystemExit(main())
