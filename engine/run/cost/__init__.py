"""What a run costs: the dry run's estimate, the real spend of its calls, the --max-cost budget and the
guard that wires both into a runner, the cost file beside the results and the console's cost lines."""
