"""MkDocs hooks (mkdocs.yml `hooks:`): add the generated reference pages (scripts/gen_docs.py) to the build,
and list in the navigation the optional pages other work adds to docs/ when they are there."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from gen_docs import pages
from mkdocs.structure.files import File, Files

# page below docs/ -> (navigation section, title): shown when the file exists.
OPTIONAL = {
    "cli.md": ("Guide", "Command-line options"),
    "reference-differences.md": ("Reference", "Differences from Weval and AgentV"),
    "regex.md": ("Reference", "Regular expressions"),
    "run-database.md": ("Internals", "The run database"),
    "server-design.md": ("Internals", "Language server design"),
}


def on_config(config: Any) -> Any:
    docs = Path(config["docs_dir"])
    nav = config["nav"]
    for rel, (section, title) in OPTIONAL.items():
        if not (docs / rel).is_file():
            continue
        for entry in nav:
            if isinstance(entry, dict) and section in entry:
                entry[section].append({title: rel})
    return config


def on_files(files: Files, config: Any) -> Files:
    for rel, text in pages().items():
        files.append(File.generated(config, rel, content=text))
    return files
