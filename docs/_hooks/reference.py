"""MkDocs hook: one API reference page per public zooport module, listed in the nav.

The pages are generated at build time from the source tree (``zooport/``, ``envs/`` and
``adapters/``, installed as ``zooport``, ``zooport.envs`` and ``zooport.adapters``), so a new
module gets its page without anyone writing one, and a module that is renamed or removed
takes its page with it: a page can never name a module that does not exist.

Which modules: every module and package whose dotted name has no part starting with ``_``,
except the command-line programs (``zooport.cli``, ``zooport.demo``, documented in the
command-line guide). A package's page shows its docstring (its map of modules); each
module's page shows its docstring and its public members, read from source.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mkdocs.structure.files import File, Files

ROOT = Path(__file__).resolve().parents[2]
#: Source directory -> the package it installs as (pyproject's ``package-dir``).
SOURCES = {"zooport": "zooport", "envs": "zooport.envs", "adapters": "zooport.adapters"}
#: Packages whose modules are programs, not API (the command-line guide documents them).
PROGRAMS = ("zooport.cli", "zooport.demo")
#: Modules whose private members include documented API: BatchedEnv's authoring hooks.
MEMBER_FILTERS = {
    "zooport.envs.batched_env": [
        "!^_",
        "^_(add_behavior|spawn|reset_agents|step|observe|action_mask|on_reset|render)$",
    ],
}
#: The nav section the generated pages fill.
SECTION = "API reference"
#: Groups of the nav section, in order: a module goes to the longest prefix that matches.
GROUPS = (
    "zooport",
    "zooport.envs",
    "zooport.envs.builtin",
    "zooport.envs.side_channel",
    "zooport.adapters",
    "zooport.adapters.wrappers",
    "zooport.checks",
)


#: Where the hook lays out the installed package tree for mkdocstrings (gitignored build/).
SOURCE_TREE = ROOT / "build" / "docs-source"


def lay_out_package() -> Path:
    """Symlinks the source directories into one ``zooport`` tree, as they install.

    mkdocstrings reads modules from source, by directory; ``envs/`` and ``adapters/`` sit
    beside ``zooport/`` in the checkout and only install inside it, so the reader gets a
    tree of links shaped like the installed package.
    """
    package = SOURCE_TREE / "zooport"
    if package.is_symlink() or package.is_file():
        package.unlink()
    package.mkdir(parents=True, exist_ok=True)
    for link in package.iterdir():
        link.unlink()
    for entry in (ROOT / "zooport").iterdir():
        if entry.name != "__pycache__":
            (package / entry.name).symlink_to(entry)
    for directory, installed in SOURCES.items():
        if directory != "zooport":
            (package / installed.rpartition(".")[2]).symlink_to(ROOT / directory)
    return SOURCE_TREE


def public_modules() -> dict[str, Path]:
    """Every documented module's dotted name -> its source file, sorted by name."""
    modules: dict[str, Path] = {}
    for directory, package in SOURCES.items():
        base = ROOT / directory
        for path in base.rglob("*.py"):
            parts = list(path.relative_to(base).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            if any(part.startswith("_") for part in parts):
                continue
            name = ".".join([package, *parts])
            if any(name == p or name.startswith(p + ".") for p in PROGRAMS):
                continue
            modules[name] = path
    return dict(sorted(modules.items()))


def page_uri(module: str) -> str:
    return f"reference/{module}.md"


def page_text(module: str, path: Path) -> str:
    options = []
    if path.name == "__init__.py":
        options.append("members: false")
    if module in MEMBER_FILTERS:
        options.append(f"filters: {MEMBER_FILTERS[module]}")
    lines = [f"::: {module}"]
    if options:
        lines += ["    options:", *(f"      {option}" for option in options)]
    return "\n".join(lines) + "\n"


def _group(module: str) -> str:
    return max((g for g in GROUPS if module == g or module.startswith(g + ".")), key=len)


def on_startup(**kwargs: Any) -> None:
    lay_out_package()


def on_config(config: Any) -> Any:
    """Fills the nav's API reference section with one entry per module, grouped."""
    groups: dict[str, list[dict[str, str]]] = {g: [] for g in GROUPS}
    for module in public_modules():
        groups[_group(module)].append({module: page_uri(module)})
    section = [{group: entries} for group, entries in groups.items() if entries]
    for item in config["nav"]:
        if isinstance(item, dict) and SECTION in item:
            item[SECTION] = [*item[SECTION], *section]
            break
    else:
        raise ValueError(f"mkdocs.yml's nav has no {SECTION!r} section for the module pages")
    return config


def on_files(files: Files, config: Any) -> Files:
    """Adds the generated module pages to the site's files."""
    for module, path in public_modules().items():
        files.append(File.generated(config, page_uri(module), content=page_text(module, path)))
    return files
