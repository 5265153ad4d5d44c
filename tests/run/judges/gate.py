"""Counts the judges running at once in a folder (argv[1]): each leaves a file while it runs, records
the most files it ever saw, and waits until another judge has started or enough time has passed."""
import json
import os
import sys
import time

folder = sys.argv[1]
sys.stdin.read()
me = os.path.join(folder, f"run-{os.getpid()}")
open(me, "w").close()
seen = 0
deadline = time.monotonic() + 1.5
while time.monotonic() < deadline:
    seen = max(seen, len([n for n in os.listdir(folder) if n.startswith("run-")]))
    time.sleep(0.02)
with open(os.path.join(folder, f"seen-{os.getpid()}"), "w") as f:
    f.write(str(seen))
os.remove(me)
print(json.dumps({"score": 1}))
