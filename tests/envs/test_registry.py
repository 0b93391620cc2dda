"""Tests of the offline registry ``zooport.envs.registry``.

Registry files and the modules their entry points name are written to ``tmp_path``; the
network is disabled for every test of this file (a connection attempt fails the test).
"""

from __future__ import annotations

import pathlib
import socket
import subprocess
import sys
import textwrap
import types

import pytest

from zooport import ArgumentTypeError, RegistryError, ZooportError
from zooport.envs.base_env import BaseEnv
from zooport.envs.registry import (
    BaseRegistryEntry,
    LocalRegistryEntry,
    RemoteRegistryEntry,
    UnityEnvRegistry,
    UnknownEnvironmentError,
    ZooportEnvRegistry,
    builtin_entries,
    default_registry,
)

BUILTINS = {
    "Basic": ("zooport.envs.builtin.basic", "Basic"),
    "BallBalance": ("zooport.envs.builtin.ball_balance", "BallBalance"),
    "GridWorld": ("zooport.envs.builtin.grid_world", "GridWorld"),
    "Tag": ("zooport.envs.builtin.tag", "Tag"),
    "Collector": ("zooport.envs.builtin.collector", "Collector"),
    "Soccer": ("zooport.envs.builtin.soccer", "Soccer"),
}


@pytest.fixture(autouse=True)
def no_network(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError(f"network access attempted: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)


class FakeEnv(BaseEnv):
    """A BaseEnv that records its constructor arguments."""

    expected_reward = 0.75
    max_episode_steps = 30

    def __init__(self, **kwargs) -> None:
        self.kwargs = kwargs

    def step(self):
        pass

    def reset(self):
        pass

    def close(self):
        pass

    @property
    def behavior_specs(self):
        return {}

    def set_actions(self, behavior_name, action):
        pass

    def set_action_for_agent(self, behavior_name, agent_id, action):
        pass

    def get_steps(self, behavior_name):
        raise NotImplementedError


@pytest.fixture
def env_module(tmp_path, monkeypatch):
    """A module ``zoo_user_envs_<n>`` on sys.path with a BaseEnv class ``UserEnv``."""
    name = f"zoo_user_envs_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(
        textwrap.dedent(
            '''
            from zooport.envs.base_env import BaseEnv

            class UserEnv(BaseEnv):
                """A user's environment.

                More words.
                """
                expected_reward = 2.5
                max_episode_steps = 64

                def __init__(self, size=1, color="red"):
                    self.size, self.color = size, color
                def step(self): pass
                def reset(self): pass
                def close(self): pass
                @property
                def behavior_specs(self): return {}
                def set_actions(self, behavior_name, action): pass
                def set_action_for_agent(self, behavior_name, agent_id, action): pass
                def get_steps(self, behavior_name): raise NotImplementedError

            class Nested:
                class Inner(UserEnv):
                    pass

            def not_an_env():
                return 42

            CONSTANT = 3
            '''
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def write(tmp_path, text: str, name: str = "registry.yaml"):
    path = tmp_path / name
    path.write_text(textwrap.dedent(text))
    return path


# --------------------------------------------------------------------------- entries


def test_local_entry_with_a_callable():
    entry = LocalRegistryEntry("Fake", FakeEnv, kwargs={"a": 1, "b": 2})
    env = entry.make(b=3, c=4)
    assert isinstance(env, FakeEnv)
    assert env.kwargs == {"a": 1, "b": 3, "c": 4}
    # Metadata falls back to the class's attributes and docstring.
    assert entry.expected_reward == 0.75
    assert entry.max_episode_steps == 30
    assert entry.description == "A BaseEnv that records its constructor arguments."
    assert entry.kwargs == {"a": 1, "b": 2}
    entry.kwargs["a"] = 99  # a copy
    assert entry.kwargs["a"] == 1


def test_explicit_metadata_wins_over_the_class():
    entry = LocalRegistryEntry(
        "Fake", FakeEnv, expected_reward=-1, description="mine", max_episode_steps=5
    )
    assert (entry.expected_reward, entry.description, entry.max_episode_steps) == (
        -1.0,
        "mine",
        5,
    )
    assert isinstance(entry, BaseRegistryEntry)
    assert entry.identifier == "Fake"


def test_string_entry_point_is_imported_only_at_use(env_module):
    entry = LocalRegistryEntry("User", f"{env_module}:UserEnv", kwargs={"size": 3})
    registry = ZooportEnvRegistry([entry])
    assert "User" in registry and registry["User"] is entry
    assert env_module not in sys.modules
    env = registry.make("User", color="blue")
    assert env_module in sys.modules
    assert type(env).__name__ == "UserEnv"
    assert (env.size, env.color) == (3, "blue")
    assert entry.expected_reward == 2.5 and entry.max_episode_steps == 64
    assert entry.description == "A user's environment.\n\nMore words."


def test_dotted_attribute_entry_point(env_module):
    entry = LocalRegistryEntry("Inner", f"{env_module}:Nested.Inner")
    assert type(entry.make()).__qualname__ == "Nested.Inner"
    # No docstring of its own: no description (not the base class's docstring).
    assert entry.description is None
    assert entry.expected_reward == 2.5  # class attributes are inherited as usual


@pytest.mark.parametrize(
    "entry_point", ["no_colon", "mod:", ":Attr", "a b:C", "mod:attr:x", "1mod:X", ""]
)
def test_malformed_entry_point_is_refused_at_construction(entry_point):
    with pytest.raises(RegistryError, match="module:attr"):
        LocalRegistryEntry("X", entry_point)


def test_entry_point_of_the_wrong_type():
    with pytest.raises(RegistryError, match="callable"):
        LocalRegistryEntry("X", 42)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("target", "match"),
    [
        ("zoo_no_such_module_xyz:Env", "cannot import module 'zoo_no_such_module_xyz'"),
        ("{mod}:Missing", "has no attribute 'Missing'"),
        ("{mod}:Nested.Missing", "has no attribute 'Nested.Missing'"),
        ("{mod}:CONSTANT", "is an int, not a callable"),
        ("{mod}:not_an_env", "expected the entry point to return a BaseEnv, got an int"),
    ],
)
def test_broken_entry_points_raise_registry_error_at_make(env_module, target, match):
    entry = LocalRegistryEntry("Broken", target.format(mod=env_module))
    with pytest.raises(RegistryError, match=match) as info:
        entry.make()
    assert "'Broken'" in str(info.value)


def test_unknown_keywords_are_named_and_constructor_errors_propagate_unchanged(env_module):
    # A keyword the entry point does not take is the caller's mistake: named, with the valid
    # ones (still a TypeError, as Python's own).
    with pytest.raises(ArgumentTypeError, match=r"\['nope'\]; it takes \['color', 'size'\]"):
        LocalRegistryEntry("User", f"{env_module}:UserEnv").make(nope=1)

    def factory(size=1):
        raise ValueError("size too large")

    # What the constructor itself raises is the environment's, and passes unchanged.
    with pytest.raises(ValueError, match="size too large") as info:
        LocalRegistryEntry("Fn", factory).make(size=2)
    assert not isinstance(info.value, ZooportError)


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"identifier": ""}, "non-empty str"),
        ({"identifier": 3}, "non-empty str"),
        ({"expected_reward": "high"}, "expected_reward must be a number"),
        ({"expected_reward": True}, "expected_reward must be a number"),
        ({"description": 5}, "description must be a str"),
        ({"max_episode_steps": 0}, "max_episode_steps must be a positive int"),
        ({"max_episode_steps": 2.5}, "max_episode_steps must be a positive int"),
        ({"kwargs": [1, 2]}, "kwargs must be a mapping"),
        ({"kwargs": {1: 2}}, "kwargs must be a mapping with str keys"),
    ],
)
def test_local_entry_validates_its_fields(kwargs, match):
    args = {"identifier": "X", "entry_point": FakeEnv, **kwargs}
    with pytest.raises(RegistryError, match=match):
        LocalRegistryEntry(**args)


def test_base_entry_is_abstract():
    with pytest.raises(TypeError):
        BaseRegistryEntry("X", 1.0, "d")  # type: ignore[abstract]


# --------------------------------------------------------------------------- registry


def test_register_duplicate_and_overwrite():
    registry = ZooportEnvRegistry()
    first = LocalRegistryEntry("A", FakeEnv)
    second = LocalRegistryEntry("A", FakeEnv, expected_reward=3)
    registry.register(first)
    with pytest.raises(RegistryError, match="'A' is already registered.*overwrite=True"):
        registry.register(second)
    assert registry["A"] is first
    registry.register(second, overwrite=True)
    assert registry["A"] is second
    with pytest.raises(RegistryError, match="BaseRegistryEntry"):
        registry.register("A")  # type: ignore[arg-type]


def test_mapping_behaviour_unregister_and_clear():
    registry = ZooportEnvRegistry(
        [LocalRegistryEntry("A", FakeEnv), LocalRegistryEntry("B", FakeEnv)]
    )
    assert len(registry) == 2 and list(registry) == ["A", "B"]
    assert "A" in registry and "Z" not in registry and ["A"] not in registry
    assert registry.get("Z") is None
    assert dict(registry.items())["B"].identifier == "B"
    removed = registry.unregister("A")
    assert removed.identifier == "A" and list(registry) == ["B"]
    with pytest.raises(UnknownEnvironmentError):
        registry.unregister("A")
    registry.clear()
    assert len(registry) == 0 and list(registry) == []
    assert "ZooportEnvRegistry([])" == repr(registry)


def test_two_registries_are_independent():
    one, two = ZooportEnvRegistry(), ZooportEnvRegistry()
    one.register(LocalRegistryEntry("A", FakeEnv))
    assert "A" not in two


def test_unknown_id_suggests_close_matches():
    registry = ZooportEnvRegistry([LocalRegistryEntry(i, FakeEnv) for i in BUILTINS])
    with pytest.raises(UnknownEnvironmentError) as info:
        registry["Basci"]
    message = str(info.value)
    assert "'Basci'" in message and "did you mean ['Basic']" in message
    assert "GridWorld" in message  # the registered ids are listed
    # Also a RegistryError, a ZooportError and (as in ML-Agents) a KeyError.
    assert isinstance(info.value, RegistryError)
    assert isinstance(info.value, ZooportError)
    assert isinstance(info.value, KeyError)
    with pytest.raises(UnknownEnvironmentError) as info:
        registry["Zzzzzz"]
    assert "did you mean" not in str(info.value)
    with pytest.raises(UnknownEnvironmentError):
        registry.make("gridworld2")
    with pytest.raises(UnknownEnvironmentError):
        registry[None]  # type: ignore[index]


# --------------------------------------------------------------------------- default registry


def test_default_registry_lists_the_builtins_in_order():
    assert list(default_registry) == list(BUILTINS)
    for identifier, (module, attr) in BUILTINS.items():
        entry = default_registry[identifier]
        assert isinstance(entry, LocalRegistryEntry)
        assert entry.entry_point == f"{module}:{attr}"
    assert [e.identifier for e in builtin_entries()] == list(BUILTINS)
    assert builtin_entries()[0] is not builtin_entries()[0]


def test_default_registry_imports_no_env_module_until_asked():
    code = textwrap.dedent(
        """
        import sys
        import zooport
        before = {m for m in sys.modules if m.startswith("zooport.envs.builtin.")}
        from zooport.envs.registry import default_registry
        entry = default_registry["Basic"]
        ids = list(default_registry)
        after = {m for m in sys.modules if m.startswith("zooport.envs.builtin.")}
        assert after == before, sorted(after - before)
        env = entry.make()
        assert "zooport.envs.builtin.basic" in sys.modules
        print("ok")
        """
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "ok"


@pytest.mark.parametrize("identifier", list(BUILTINS))
def test_builtin_metadata_comes_from_the_class(identifier):
    module, attr = BUILTINS[identifier]
    cls = getattr(__import__(module, fromlist=[attr]), attr)
    entry = default_registry[identifier]
    assert entry.expected_reward == float(cls.expected_reward)
    assert entry.max_episode_steps == cls.max_episode_steps
    assert entry.description.splitlines()[0] == cls.__doc__.strip().splitlines()[0]
    env = entry.make()
    try:
        assert type(env) is cls
        assert isinstance(env, BaseEnv)
    finally:
        env.close()


# --------------------------------------------------------------------------- yaml files


def test_register_from_yaml_local_entries(tmp_path, env_module):
    path = write(
        tmp_path,
        f"""
        environments:
          - Small:
              entry_point: "{env_module}:UserEnv"
              expected_reward: 1
              description: |
                A small one.
              max_episode_steps: 10
              kwargs: {{size: 2}}
          - Plain:
              entry_point: {env_module}:UserEnv
        """,
    )
    registry = ZooportEnvRegistry()
    assert registry.register_from_yaml(path) == ["Small", "Plain"]
    assert env_module not in sys.modules  # registration imports nothing
    small = registry["Small"]
    assert isinstance(small, LocalRegistryEntry)
    assert small.expected_reward == 1.0 and isinstance(small.expected_reward, float)
    assert small.description == "A small one.\n"
    assert small.max_episode_steps == 10
    assert small.kwargs == {"size": 2}
    env = registry.make("Small", color="green")
    assert (env.size, env.color) == (2, "green")
    plain = registry["Plain"]
    assert plain.expected_reward == 2.5 and plain.max_episode_steps == 64
    assert registry.make("Plain").size == 1


def test_register_from_yaml_accepts_ml_agents_remote_entries(tmp_path):
    path = write(
        tmp_path,
        """
        environments:
        - 3DBall:
            expected_reward: 100
            description: |
              ## 3DBall
              Balance a ball.
            linux_url: https://example.invalid/linux/3DBall.zip
            darwin_url: https://example.invalid/darwin/3DBall.zip
            win_url: null
            additional_args: ["-logFile", "-"]
        - Basic:
            expected_reward: 0.93
            darwin_url: https://example.invalid/darwin/Basic.zip
        """,
    )
    registry = ZooportEnvRegistry()
    assert registry.register_from_yaml(str(path)) == ["3DBall", "Basic"]
    ball = registry["3DBall"]
    assert isinstance(ball, RemoteRegistryEntry)
    assert ball.expected_reward == 100.0
    assert ball.description.startswith("## 3DBall")
    assert ball.linux_url == "https://example.invalid/linux/3DBall.zip"
    assert ball.darwin_url == "https://example.invalid/darwin/3DBall.zip"
    assert ball.win_url is None
    assert ball.additional_args == ["-logFile", "-"]
    assert registry["Basic"].description is None


def test_yaml_duplicates_need_overwrite_and_nothing_is_half_registered(tmp_path):
    registry = ZooportEnvRegistry([LocalRegistryEntry("B", FakeEnv)])
    path = write(
        tmp_path,
        """
        environments:
          - A: {entry_point: "mod:Env"}
          - B: {entry_point: "mod:Other"}
        """,
    )
    with pytest.raises(RegistryError, match=r"\['B'\] are already registered"):
        registry.register_from_yaml(path)
    assert list(registry) == ["B"]
    assert registry.register_from_yaml(path, overwrite=True) == ["A", "B"]
    assert registry["B"].entry_point == "mod:Other"


BAD_FILES = [
    ("environments: [", "not valid YAML"),
    ("- A: {entry_point: 'm:E'}", "top-level 'environments:' list, got list"),
    ("envs: []", "top-level 'environments:' list, got keys"),
    ("", "top-level 'environments:' list, got NoneType"),
    ("environments: {A: {entry_point: 'm:E'}}", "'environments' must be a list, got dict"),
    ("environments: []\nversion: 2", "unknown top-level keys \\['version'\\]"),
    ("environments:\n  - A: {entry_point: 'm:E'}\n    B: {}", "exactly one key"),
    ("environments:\n  - just_a_string", "exactly one key"),
    ("environments:\n  - A: [1, 2]", "expected a mapping of fields"),
    ("environments:\n  - 12: {entry_point: 'm:E'}", "non-empty str identifier, got 12"),
    ("environments:\n  - A:", "either an 'entry_point'"),
    ("environments:\n  - A: {description: hi}", "either an 'entry_point'"),
    ("environments:\n  - A: {entry_point: 'm:E', linux_url: u}", "either an 'entry_point'"),
    ("environments:\n  - A: {entry_point: 'm:E', reward: 1}", "unknown keys \\['reward'\\]"),
    ("environments:\n  - A: {linux_url: u, kwargs: {}}", "unknown keys \\['kwargs'\\]"),
    ("environments:\n  - A: {entry_point: 'm'}", "module:attr"),
    ("environments:\n  - A: {entry_point: 3}", "entry_point must be a 'module:attr' str"),
    ("environments:\n  - A: {entry_point: 'm:E', expected_reward: x}", "must be a number"),
    ("environments:\n  - A: {entry_point: 'm:E', max_episode_steps: -1}", "positive int"),
    ("environments:\n  - A: {entry_point: 'm:E', kwargs: [1]}", "kwargs must be a mapping"),
    ("environments:\n  - A: {linux_url: 5}", "linux_url must be a str"),
    ("environments:\n  - A: {linux_url: u, additional_args: x}", "list of str"),
    (
        "environments:\n  - A: {entry_point: 'm:E'}\n  - A: {entry_point: 'm:F'}",
        "environments\\[1\\] \\('A'\\): the identifier appears twice",
    ),
]


@pytest.mark.parametrize(("text", "match"), BAD_FILES)
def test_bad_registry_files_name_the_file_and_the_problem(tmp_path, text, match):
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    registry = ZooportEnvRegistry()
    with pytest.raises(RegistryError, match=match) as info:
        registry.register_from_yaml(path)
    assert str(info.value).startswith(str(path))
    assert len(registry) == 0


def test_missing_file_and_urls_are_refused(tmp_path):
    registry = ZooportEnvRegistry()
    missing = tmp_path / "nope.yaml"
    with pytest.raises(RegistryError, match="cannot read the registry file") as info:
        registry.register_from_yaml(missing)
    assert str(missing) in str(info.value)
    url = "https://storage.googleapis.com/mlagents-test-environments/1.1.0/manifest.yaml"
    with pytest.raises(RegistryError, match="local files only"):
        registry.register_from_yaml(url)


# --------------------------------------------------------------------------- remote entries


def remote(**overrides) -> RemoteRegistryEntry:
    args = {
        "identifier": "3DBall",
        "expected_reward": 100,
        "description": "Balance.",
        "linux_url": "https://example.invalid/linux.zip",
        "darwin_url": "https://example.invalid/darwin.zip",
        "win_url": "https://example.invalid/win.zip",
        **overrides,
    }
    return RemoteRegistryEntry(**args)


def test_remote_make_refuses_without_opt_in():
    with pytest.raises(RegistryError, match="allow_download=True") as info:
        remote().make(no_graphics=True)
    assert "'3DBall'" in str(info.value)


@pytest.mark.parametrize(
    ("platform", "url"),
    [
        ("linux", "https://example.invalid/linux.zip"),
        ("darwin", "https://example.invalid/darwin.zip"),
        ("win32", "https://example.invalid/win.zip"),
    ],
)
def test_remote_url_follows_the_platform(monkeypatch, platform, url):
    monkeypatch.setattr(sys, "platform", platform)
    assert remote().url == url


def test_remote_without_a_build_for_this_platform(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    entry = remote(linux_url=None, win_url=None)
    with pytest.raises(RegistryError, match=r"no build for this platform.*\['darwin_url'\]"):
        entry.make(allow_download=True)


def test_remote_make_needs_mlagents_envs(monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setitem(sys.modules, "mlagents_envs", None)  # import fails
    with pytest.raises(
        RegistryError,
        match='needs mlagents_envs.*pip install "mlagents-envs==0.28.0" "protobuf==3.20.3"',
    ):
        remote().make(allow_download=True)


def test_remote_make_delegates_to_mlagents_envs(monkeypatch):
    calls = []

    class FakeMLAgentsEntry:
        def __init__(self, *args, **kwargs):
            calls.append(("init", args, kwargs))

        def make(self, **kwargs):
            calls.append(("make", kwargs))
            return "unity-env"

    fake = types.ModuleType("mlagents_envs.registry.remote_registry_entry")
    fake.RemoteRegistryEntry = FakeMLAgentsEntry
    monkeypatch.setitem(sys.modules, "mlagents_envs", types.ModuleType("mlagents_envs"))
    monkeypatch.setitem(
        sys.modules, "mlagents_envs.registry", types.ModuleType("mlagents_envs.registry")
    )
    monkeypatch.setitem(sys.modules, "mlagents_envs.registry.remote_registry_entry", fake)
    monkeypatch.setattr(sys, "platform", "linux")
    entry = remote(additional_args=["-batchmode"])
    assert entry.make(allow_download=True, worker_id=3) == "unity-env"
    init, make = calls
    assert init[1] == (
        "3DBall",
        100.0,
        "Balance.",
        "https://example.invalid/linux.zip",
        "https://example.invalid/darwin.zip",
        "https://example.invalid/win.zip",
    )
    assert init[2] == {"additional_args": ["-batchmode"]}
    assert make == ("make", {"worker_id": 3})
    # tmp_dir (ML-Agents': where the build is downloaded) reaches mlagents_envs' entry.
    calls.clear()
    entry = remote(tmp_dir=pathlib.Path("/tmp/unity-builds"))
    assert entry.tmp_dir == "/tmp/unity-builds"
    entry.make(allow_download=True)
    assert calls[0][2] == {"tmp_dir": "/tmp/unity-builds"}
    # Without additional_args nothing extra is passed (older mlagents_envs lack it).
    calls.clear()
    remote().make(allow_download=True)
    assert calls[0][2] == {}


def test_remote_entry_takes_mlagents_arguments_by_position():
    # mlagents_envs' order: identifier, expected_reward, description, the three urls,
    # additional_args, tmp_dir.
    entry = RemoteRegistryEntry("3DBall", 100, "d", "l", None, None, ["-x"], "/tmp/builds")
    assert (entry.additional_args, entry.tmp_dir, remote().tmp_dir) == (["-x"], "/tmp/builds", None)


def test_unity_env_registry_is_mlagents_name_and_replaces_on_register():
    # mlagents_envs.registry.UnityEnvRegistry: a Mapping; register() replaces an entry with
    # the same identifier; an unknown identifier is a KeyError.
    registry = UnityEnvRegistry()
    first, second = remote(), remote(description="Again.")
    registry.register(first)
    registry.register(second)
    assert list(registry) == ["3DBall"] and registry["3DBall"] is second
    with pytest.raises(KeyError):
        registry["Nope"]
    registry.clear()
    assert len(registry) == 0
    assert isinstance(registry, ZooportEnvRegistry)


def test_remote_entry_validates_its_fields():
    with pytest.raises(RegistryError, match="tmp_dir must be a path"):
        remote(tmp_dir=3)
    with pytest.raises(RegistryError, match="darwin_url must be a str"):
        remote(darwin_url=3)
    with pytest.raises(RegistryError, match="additional_args must be a list of str"):
        remote(additional_args="-batchmode")
