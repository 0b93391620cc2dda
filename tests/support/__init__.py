"""What the tests share: cores, envs, reference loops and checks, in importable modules.

No module here is a test module, and no test module imports another: a helper two test
modules need lives here (``tests/test_layout.py`` checks it). Modules:

- ``specs``: building blocks of behaviour specs (``obs_spec``).
- ``paths``: the checkout's directories, ``load_script``.
- ``probes``: ``Probe`` cores, ``reference_rollout`` (the by-hand PettingZoo reference).
- ``counters``: ``Counters``, the slot family's hand-computable core.
- ``branches``: ``Branches``/``Hooked`` (action values, copies, failed steps, re-entry).
- ``raw_cores``: cores that behave as Unity scenes do (late specs, tampered observations).
- ``pool_cores``: cores for the CorePool tests, importable by its worker processes.
- ``old_api``: ML-Agents' older BaseEnv API generations and ``OldWalkers``.
- ``ticker``: ``Ticker``, a generic Gymnasium env.
- ``wrappers``: the wrapper tests' envs and their shared contract check.
- ``bad_inputs``: the case table of the standing bad-input matrix.
- ``pettingzoo_versions``: what the installed PettingZoo's test utilities can do.
"""
