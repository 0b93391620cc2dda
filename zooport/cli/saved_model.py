"""A trained policy on disk: SB3's own zip (``PPO.load`` and rl-zoo3 read it unchanged) plus
:data:`INFO_MEMBER`, which says what rebuilds its environment."""

from __future__ import annotations

import json
import os
import zipfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from zooport.cli.common import UsageError, check_output_path, require

#: The zip member that holds the :class:`ModelInfo`, as JSON.
INFO_MEMBER = "zooport.json"
#: The algorithms ``zooport train`` trains (both in zooport's [sb3] extra): name -> module.
ALGORITHMS = {"PPO": "stable_baselines3", "MaskablePPO": "sb3_contrib"}
_FORMAT = 1


@dataclass(frozen=True)
class ModelInfo:
    """What a saved model was trained on, so ``play`` and ``--resume`` can rebuild it."""

    env: str
    kwargs: dict[str, Any] = field(default_factory=dict)
    api: str = "vector"
    behavior: str | None = None
    algorithm: str = "PPO"
    seed: int = 0
    timesteps: int = 0
    zooport_version: str = ""

    def to_json(self) -> str:
        try:
            return json.dumps({"format": _FORMAT, **asdict(self)}, indent=2)
        except TypeError as exc:
            raise UsageError(
                f"--save: expected keyword arguments JSON can hold, got {self.kwargs!r} ({exc})"
            ) from None

    @classmethod
    def from_json(cls, text: str, where: str) -> ModelInfo:
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise UsageError(f"{where}: {INFO_MEMBER} is not valid JSON ({exc.msg})") from None
        fields = dict(data) if isinstance(data, dict) else {"format": data}
        given = fields.pop("format", None)
        if given != _FORMAT:
            raise UsageError(f"{where}: expected {INFO_MEMBER} of format {_FORMAT}, got {given!r}")
        try:
            info = cls(**fields)
        except TypeError as exc:
            raise UsageError(f"{where}: {INFO_MEMBER} has unexpected fields: {exc}") from None
        if info.algorithm not in ALGORITHMS or not isinstance(info.kwargs, dict):
            raise UsageError(
                f"{where}: expected an algorithm among {list(ALGORITHMS)} and a kwargs object, "
                f"got {info.algorithm!r} and {info.kwargs!r}"
            )
        return info

    def options_for(
        self, env: str, kwargs: dict[str, Any] | None = None, api: str | None = None,
        behavior: str | None = None,
    ) -> tuple[dict[str, Any], str, str | None]:  # fmt: skip
        """``(kwargs, api, behavior)`` for ``env``: as given, else as trained on this ``env``."""
        same = env == self.env
        if kwargs is None:
            kwargs = dict(self.kwargs) if same else {}
        return kwargs, api or self.api, self.behavior if behavior is None and same else behavior


def _zip(path: str | os.PathLike[str]) -> Path:
    file = Path(path)  # SB3 writes and finds "model" as "model.zip"
    return file.with_suffix(".zip") if file.suffix == "" else file


def save_path(path: str | os.PathLike[str]) -> Path:
    """The file ``--save`` writes (``.zip`` added to a bare name, as SB3 does), checked."""
    return check_output_path(_zip(path), "--save", (".zip",))


def save_model(model: Any, path: str | os.PathLike[str], info: ModelInfo) -> Path:
    """Writes ``model`` with SB3's ``save``, and ``info`` into the same zip."""
    file = save_path(path)
    document = info.to_json()  # found unserialisable before anything is written
    model.save(file)
    with zipfile.ZipFile(file, "a") as archive:
        archive.writestr(INFO_MEMBER, document)
    return file


def _existing(path: str | os.PathLike[str], option: str) -> Path:
    file = Path(path) if Path(path).is_file() else _zip(path)
    if not file.is_file():
        raise UsageError(f"{option}: expected a model saved by `zooport train --save`, got "
                         f"{str(path)!r}, which is not a file")  # fmt: skip
    return file


def read_model_info(path: str | os.PathLike[str], option: str = "--model") -> ModelInfo:
    """The :class:`ModelInfo` saved with the model at ``path`` (no torch needed)."""
    file = _existing(path, option)
    try:
        with zipfile.ZipFile(file) as archive:
            text = archive.read(INFO_MEMBER).decode("utf-8")
    except KeyError:
        raise UsageError(
            f"{option}: {str(file)!r} has no {INFO_MEMBER}: expected a model saved by "
            f"`zooport train --save`, which records the environment and algorithm"
        ) from None
    except (zipfile.BadZipFile, OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{option}: expected SB3's zip file, got {str(file)!r} ({exc})") from None
    return ModelInfo.from_json(text, f"{option} {file}")


def load_model(
    path: str | os.PathLike[str], info: ModelInfo, *, env: Any = None, option: str = "--model"
) -> Any:
    """The model at ``path``, loaded on CPU by its algorithm's ``load`` (on ``env`` if given)."""
    module = require(ALGORITHMS[info.algorithm], "sb3", f"loading a {info.algorithm} model")
    file = _existing(path, option)
    try:
        return getattr(module, info.algorithm).load(file, env=env, device="cpu")
    except (ValueError, KeyError) as exc:  # SB3: spaces that do not match the env's
        raise UsageError(f"{option} {file}: {' '.join(str(exc).split())}") from None
