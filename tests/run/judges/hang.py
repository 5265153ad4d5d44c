"""Starts a grandchild that sleeps, writes both pids to argv[1], then hangs without answering."""
import subprocess
import sys
import time

child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"])
with open(sys.argv[1], "w") as f:
    f.write(f"{child.pid}\n")
time.sleep(300)
