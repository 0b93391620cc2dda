"""What the examples share, so that each example shows only its own route.

Modules:
    sb3: the Stable-Baselines3 examples' command line, training loop, evaluation and report,
        and the seeding fix SuperSuit's SB3 vector env needs.

Run an example from the repository root (``python examples/<name>.py``): the example's own
directory is then first on ``sys.path``, which is how it finds this package.
"""
