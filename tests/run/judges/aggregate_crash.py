import sys

sys.stderr.write("aggregator exploded\n")
sys.exit(3)
