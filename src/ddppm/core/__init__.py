"""Method-independent building blocks: the problem, the network, partitions, metrics, seeds, I/O, errors."""
