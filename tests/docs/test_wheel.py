"""The wheel: named evalspec-lsp, its long description is the short README (not the 248 KB of before), the
LICENSE is in it, and the finding-code table that the docs and links are made from ships with it."""

from __future__ import annotations

import email
import subprocess
import sys
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_wheel_carries_the_readme_and_the_license(tmp_path: Path) -> None:
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w",
                    str(tmp_path), str(ROOT)], check=True, capture_output=True)
    wheel = zipfile.ZipFile(next(tmp_path.glob("evalspec_lsp-*.whl")))
    names = wheel.namelist()
    [metadata_name] = [n for n in names if n.endswith(".dist-info/METADATA")]
    metadata = email.message_from_string(wheel.read(metadata_name).decode("utf-8"))
    assert metadata["Name"] == "evalspec-lsp" and metadata["License"] == "MIT"
    body = metadata.get_payload()
    assert isinstance(body, str) and body.strip() == (ROOT / "README.md").read_text(encoding="utf-8").strip()
    assert len(wheel.read(metadata_name)) < 20_000
    requires = metadata.get_all("Requires-Dist") or []
    assert not any(r.startswith(("ruamel", "jsonschema")) and "extra ==" not in r for r in requires)
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    assert "evalspec/registry/finding_codes.py" in names and "evalspec/finding_docs.py" in names


def test_the_server_reports_the_distributions_version() -> None:
    """`evalspec-lsp --version` reads the installed distribution, evalspec-lsp (under the old name it found
    nothing and said 0.0.0, or another project's version)."""
    from evalspec import __version__

    out = subprocess.run([sys.executable, "-m", "evalspec_lsp", "--version"], capture_output=True, text=True,
                         check=True, timeout=60).stdout
    assert out.strip() == f"evalspec-lsp {__version__}"
