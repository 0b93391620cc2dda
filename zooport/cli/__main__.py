"""``python -m zooport.cli``: ``python -m zooport``, which runs the ``zooport`` command line."""

import zooport.__main__  # noqa: F401
