"""What the machine code costs: estimates for IR ops (costs.py) and, on the compiled path, the facts ptxas and nvdisasm give."""
