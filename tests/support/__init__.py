"""What the tests share: cores, envs, reference loops and checks, in importable modules.

No module here is a test module, and no test module imports another: a helper two test
modules need lives here (``tests/test_layout.py`` checks it). Modules:

- ``specs``: building blocks of behaviour specs (``obs_spec``).
- ``paths``: the checkout's directories, ``load_script``, ``importable``.
- ``adapters``: every adapter as a function of a core (``ADAPTERS``).
- ``checkers``: the upstream checkers under an allow-list of warnings (``run_allowing``).
- ``probes``: ``Probe`` cores, ``reference_rollout`` (the by-hand PettingZoo reference),
  ``TRAJECTORY_CORES``.
- ``core_runs``: a raw core driven by hand (``random_rollout``).
- ``counters``: ``Counters``, the slot family's hand-computable core.
- ``branches``: ``Branches``/``Hooked`` (action values, copies, failed steps, re-entry).
- ``raw_cores``: cores that behave as Unity scenes do (late specs, tampered observations).
- ``pool_cores``: cores for the CorePool tests, importable by its worker processes.
- ``old_api``: ML-Agents' older BaseEnv API generations and ``OldWalkers``.
- ``ticker``: ``Ticker``, a generic Gymnasium env.
- ``wrappers``: the wrapper tests' envs and their shared contract check.
- ``bad_inputs``: the case table of the standing bad-input matrix.
- ``wire``: ML-Agents' side-channel ids and frames, written out by hand.
- ``pettingzoo_versions``: what the installed PettingZoo's test utilities can do.
"""
