"""``python -m zooport.demo`` (``make demo``): runs :mod:`zooport.cli.demo`."""

if __name__ == "__main__":
    from zooport.cli.demo import main

    raise SystemExit(main())
