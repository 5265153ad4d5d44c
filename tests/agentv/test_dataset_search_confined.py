"""`evalspec run cases.jsonl` names the suite that includes the dataset (including_suites.py). Outside a
repository the search walked the dataset's parent folder and every subfolder beside the dataset's,
reading each YAML file there (the attack run's seventh round, `bench/attack.py outside7`): files no
suite that may name the dataset can be in, since a suite outside a repository may name only files below
its own folder. Now only the dataset's folder and its parents are read, each without its subfolders."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

# The search in a process of its own, with an audit hook noting every file opened under the folder.
PROBE = """
import sys
from pathlib import Path
watch = sys.argv[2]
opened = []
sys.addaudithook(lambda event, args: opened.append(str(args[0])) if event in ("open", "os.open") and args
                 and str(args[0]).startswith(watch) else None)
from evalspec.agentv.including_suites import suites_including
found = suites_including(Path(sys.argv[1]))
print("found", *[str(p) for p in found], sep="\\n")
print("opened", *sorted(set(opened)), sep="\\n")
"""


def test_without_a_repository_only_the_datasets_folder_and_its_parents_are_read(tmp_path: Path) -> None:
    data = tmp_path / "a" / "b" / "data"
    data.mkdir(parents=True)
    (data / "cases.jsonl").write_text('{"id": "t", "criteria": "c", "input": "hi"}\n')
    beside = tmp_path / "a" / "b" / "other"
    beside.mkdir()
    (beside / "s.eval.yaml").write_text("name: s\ndescription: d\ntests: ./*\n")
    (tmp_path / "a" / "b" / "p.eval.yaml").write_text("name: p\ndescription: d\ntests: ./data/cases.jsonl\n")
    ran = subprocess.run([sys.executable, "-c", PROBE, str(data / "cases.jsonl"), str(tmp_path)],
                         capture_output=True, text=True, check=True)
    found, opened = ran.stdout.split("opened\n")
    assert found.split("\n")[1:-1] == [str(tmp_path / "a" / "b" / "p.eval.yaml")]
    assert str(tmp_path / "a" / "b" / "p.eval.yaml") in opened
    assert str(beside) not in opened, opened
