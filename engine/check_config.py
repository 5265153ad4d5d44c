"""Which findings `evalspec check` reports: `--select` / `--ignore` codes (globs like `unknown-*`), from
the command line or from the eval repository's configuration, as ruff reads `[tool.ruff]`.

The configuration is the nearest of `evalspec.toml` / `.evalspec.toml` (a `[check]` table) or
`pyproject.toml` (a `[tool.evalspec.check]` table) found walking up from the working folder to the
repository root. The command line's `--select` replaces the file's `select`; `--ignore` adds to its `ignore`.
A finding left out neither prints nor fails the check (it is counted in the summary as ignored).
"""

from __future__ import annotations

import fnmatch
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

CONFIG_NAMES = ("evalspec.toml", ".evalspec.toml", "pyproject.toml")


class ConfigError(Exception):
    pass


@dataclass
class CodeFilter:
    select: list[str] = field(default_factory=list)  # empty: every code
    ignore: list[str] = field(default_factory=list)
    source: Path | None = None  # the configuration file read, if any

    def keeps(self, code: str) -> bool:
        if self.select and not any(fnmatch.fnmatchcase(code, p) for p in self.select):
            return False
        return not any(fnmatch.fnmatchcase(code, p) for p in self.ignore)


def codes(values: Iterable[str]) -> list[str]:
    """`--select a,b --select c` → [a, b, c]."""
    return [c.strip() for v in values for c in v.split(",") if c.strip()]


def find_config(start: Path) -> Path | None:
    folder = start.resolve()
    for current in (folder, *folder.parents):
        for name in CONFIG_NAMES:
            candidate = current / name
            if candidate.is_file() and (name != "pyproject.toml" or _has_table(candidate)):
                return candidate
        if (current / ".git").exists():
            return None
    return None


def _has_table(pyproject: Path) -> bool:
    try:
        return "[tool.evalspec" in pyproject.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return False


def load(path: Path) -> CodeFilter:
    import tomllib

    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the configuration: {exc}") from None
    table = data.get("tool", {}).get("evalspec", {}) if path.name == "pyproject.toml" else data
    check = table.get("check", {}) if isinstance(table, dict) else {}
    if not isinstance(check, dict):
        raise ConfigError(f"{path}: [check] must be a table")
    out = CodeFilter(source=path)
    for key in ("select", "ignore"):
        value = check.get(key, [])
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise ConfigError(f"{path}: check.{key} must be a list of finding codes (strings)")
        setattr(out, key, codes(value))
    unknown = sorted(set(check) - {"select", "ignore"})
    if unknown:
        raise ConfigError(f"{path}: unknown key(s) in the check table: {', '.join(unknown)} (known: select, ignore)")
    return out


def code_filter(select: Sequence[str], ignore: Sequence[str], *, start: Path | None = None,
                use_config: bool = True) -> CodeFilter:
    found = find_config(start or Path.cwd()) if use_config else None
    base = load(found) if found is not None else CodeFilter()
    if select:
        base.select = codes(select)
    base.ignore = [*base.ignore, *codes(ignore)]
    _known(base.select, base.ignore, found)
    return base


def _known(select: Sequence[str], ignore: Sequence[str], source: Path | None) -> None:
    """Every code or glob names at least one declared finding code (as ruff refuses an unknown rule)."""
    import difflib

    from .registry.finding_codes import CODES

    for pattern in [*select, *ignore]:
        if not any(fnmatch.fnmatchcase(code, pattern) for code in CODES):
            near = difflib.get_close_matches(pattern, list(CODES), n=1)
            where = f" (in {source})" if source is not None else ""
            hint = f"; did you mean '{near[0]}'?" if near else " (`evalspec rule --all` lists them)"
            raise ConfigError(f"unknown finding code '{pattern}'{where}{hint}")
