#!/usr/bin/env python3
"""Measures eager PyTorch's host time per operator on this machine's CPU.

The forward figure is the time of one call from Python into torch with autograd
recording (a multiplication of 8-element tensors, in a chain of 200); the backward
figure is the time of one ATen operator run by the autograd engine (the chain's
backward). The fastest of 30 runs is taken: the machine's noise only adds. Tensors on
the CPU do no kernel launch; a CUDA tensor adds one (cudaLaunchKernel's host side) and
the caching allocator's bookkeeping, which pipeplan's eager preset adds as an
assumption (core/cluster/framework.go, eagerOpSeconds).

Run with Debian's python3-torch: /usr/bin/python3 tools/opcount/host_cost.py
Measured for the preset (PyTorch 1.13, an AMD EPYC core shared with other work):
forward 3.9 to 4.7 us per call, backward 5.1 to 5.6 us per operator, over three runs.
"""

import time

import torch


def main():
    torch.set_num_threads(1)
    x = torch.randn(8, requires_grad=True)
    y = torch.randn(8)
    n = 200

    def chain():
        z = x
        for _ in range(n):
            z = z * y
        return z.sum()

    def forward():
        t = time.perf_counter()
        chain()
        return time.perf_counter() - t

    def backward():
        z = chain()
        t = time.perf_counter()
        z.backward()
        return time.perf_counter() - t

    fwd = min(forward() for _ in range(30)) / n
    bwd = min(backward() for _ in range(30)) / n
    print("forward %.1f us per call, backward %.1f us per operator" % (fwd * 1e6, bwd * 1e6))


if __name__ == "__main__":
    main()
