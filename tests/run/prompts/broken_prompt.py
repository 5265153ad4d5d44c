import sys

sys.stderr.write("template engine missing\n")
sys.exit(2)
