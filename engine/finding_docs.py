"""Each finding code's page (Markdown) and the link a diagnostic carries to it.

`page(code)` renders a code of engine/registry/finding_codes.py: why it matters, the example, what
`evalspec check` really says about it (the example is checked when the page is made), the fix. The docs
site (scripts/gen_docs.py), `evalspec rule CODE` and the offline pages share it. `doc_url(code)` is the
page's address: `<docs url>/codes/<code>/` when a docs site is set (the editor's `docsUrl`, or
$EVALSPEC_DOCS_URL), else a local Markdown file written once per version under the user's cache folder.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

from . import __version__
from .analysis import analyze_file
from .finding_format import format_finding
from .findings import Finding
from .registry.finding_codes import CODES, Code


def checked(entry: Code, text: str) -> list[tuple[str, Finding]]:
    """What `evalspec check` reports on `text` saved as `entry.file` in an empty folder: (line, finding)."""
    with tempfile.TemporaryDirectory(prefix="evalspec-example-") as tmp:
        path = Path(tmp) / entry.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        analysis = analyze_file(path)
        out = []
        for f in analysis.findings:
            line = format_finding(analysis, f).replace(tmp + os.sep, "").replace(tmp, ".")
            out.append((line, f))
        return out


def _yaml(text: str) -> str:
    return f"```yaml\n{text.rstrip()}\n```\n" if text.strip() else "*(an empty file)*\n"


def page(entry: Code, *, check: bool = True) -> str:
    """The Markdown page of one code; with `check`, what `evalspec check` says of its example (the docs
    site and `evalspec rule`). The offline pages a diagnostic links to are written without it: making a
    link reads no file and analyses nothing."""
    lines = [f"# {entry.code}", "", f"**{entry.title}** · {entry.severity} · reported by `{entry.source}`", "",
             "## Why it matters", "", entry.why, ""]
    if entry.example is not None:
        found = [(line, f) for line, f in checked(entry, entry.example) if f.code == entry.code] if check else []
        lines += ["## Example", "", f"`{entry.file}`:", "", _yaml(entry.example)]
        if found:
            lines += ["`evalspec check` says:", "", "```text", *(line for line, _ in found), "```", ""]
            fixes = [fix.title for _, f in found for fix in f.fixes]
            if fixes:
                lines += [f"The editor offers a quick fix: *{fixes[0]}*.", ""]
    if entry.fixed is not None or entry.fix:
        lines += ["## Fix", ""]
        if entry.fix:
            lines += [entry.fix, ""]
        if entry.fixed is not None:
            lines += [_yaml(entry.fixed)]
    return "\n".join(lines).rstrip() + "\n"


# --- links ----------------------------------------------------------------------------------------------

_base_url: str | None = None
_urls: dict[str, str | None] = {}  # code -> its link, as last worked out (a big file has a million findings)


def set_docs_url(url: object) -> None:
    """The docs site diagnostics link to (the editor's `docsUrl` setting); None or "" for the default.
    Links are worked out again after it (and $EVALSPEC_DOCS_URL read again)."""
    global _base_url
    _base_url = url.strip().rstrip("/") if isinstance(url, str) and url.strip() else None
    _urls.clear()


def docs_url() -> str | None:
    """The docs site set by the editor, else $EVALSPEC_DOCS_URL, else None (the local pages)."""
    return _base_url or (os.environ.get("EVALSPEC_DOCS_URL") or "").strip().rstrip("/") or None


def local_pages_dir() -> Path:
    """Where the code pages are written as Markdown for offline links (a folder per evalspec version):
    $EVALSPEC_DOCS_DIR, else the user's cache folder."""
    if os.environ.get("EVALSPEC_DOCS_DIR"):
        return Path(os.environ["EVALSPEC_DOCS_DIR"]) / __version__ / "codes"
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(cache) / "evalspec" / "docs" / __version__ / "codes"


def doc_url(code: str) -> str | None:
    """The address of `code`'s page, or None for a code without a page (or a page that cannot be written).
    One dict lookup once a code's link is known."""
    try:
        return _urls[code]
    except KeyError:
        pass
    url = _urls[code] = _link(code)
    return url


def _link(code: str) -> str | None:
    entry = CODES.get(code)
    if entry is None:
        return None
    base = docs_url()
    if base:
        return f"{base}/codes/{code}/"
    path = local_pages_dir() / f"{code}.md"
    try:
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_name(f".{code}.{os.getpid()}.tmp")
            tmp.write_text(page(entry, check=False), encoding="utf-8")
            os.replace(tmp, path)
    except OSError:
        return None
    return path.as_uri()
