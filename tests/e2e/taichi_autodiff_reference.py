"""Taichi 1.7.4's gradients for the cases of tests/e2e/taichi_autodiff_test.cpp.

Semantics from Taichi's own autodiff tests (basic math at ordinary points and at the points
where a rule must choose: abs at 0, min/max at a tie, floor, a select), atomics (a scatter's
adjoint is a gather), loops with loop-carried values (Taichi's autodiff stack). Run it with
Taichi installed (python3 -m venv /tmp/ti && /tmp/ti/bin/pip install taichi==1.7.4) to print
the values the C++ test holds:

    /tmp/ti/bin/python tests/e2e/taichi_autodiff_reference.py
"""
import warnings

import taichi as ti

warnings.filterwarnings("ignore")  # the cases' bodies are plain Python functions, inlined

ti.init(arch=ti.cpu, default_fp=ti.f64, random_seed=0)

XS = [-1.5, -0.5, 0.0, 0.25, 0.5, 2.0]
n = len(XS)


def grads_of(body):
    """x.grad after loss = sum_i body(x[i]) (one parallel loop, atomic add into loss)."""
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def compute():
        for i in x:
            loss[None] += body(x[i])

    for i, v in enumerate(XS):
        x[i] = v
    with ti.ad.Tape(loss=loss):
        compute()
    return [x.grad[i] for i in range(n)]


CASES = {
    "sin": lambda v: ti.sin(v),
    "exp": lambda v: ti.exp(v),
    "log": lambda v: ti.log(v * v + 1.0),
    "abs": lambda v: ti.abs(v),
    "max0": lambda v: ti.max(v, 0.0),
    "min0": lambda v: ti.min(v, 0.0),
    "floor": lambda v: ti.floor(v) * v,
    "select": lambda v: ti.select(v > 0.25, v * v, -v),
    "sqrt_abs": lambda v: ti.sqrt(ti.abs(v) + 1.0),
    "atan2": lambda v: ti.atan2(v, 0.5),
}


def main():
    for name, body in CASES.items():
        g = grads_of(body)
        print(name, " ".join(repr(float(v)) for v in g))

    # Atomics: y[i % 2] += x[i] * x[i]; loss = y[0] * 3 + y[1] * 5 (a scatter, then a gather).
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    y = ti.field(ti.f64, shape=2, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def scatter():
        for i in x:
            y[i % 2] += x[i] * x[i]

    @ti.kernel
    def weigh():
        loss[None] = y[0] * 3.0 + y[1] * 5.0

    for i, v in enumerate(XS):
        x[i] = v
    with ti.ad.Tape(loss=loss):
        scatter()
        weigh()
    print("scatter", " ".join(repr(float(x.grad[i])) for i in range(n)))

    # A loop-carried value: v = v * 0.9 + sin(v), four times, per element.
    x = ti.field(ti.f64, shape=n, needs_grad=True)
    loss = ti.field(ti.f64, shape=(), needs_grad=True)

    @ti.kernel
    def iterate():
        for i in x:
            v = x[i]
            for _ in range(4):
                v = v * 0.9 + ti.sin(v)
            loss[None] += v

    for i, v in enumerate(XS):
        x[i] = v
    with ti.ad.Tape(loss=loss):
        iterate()
    print("loop", " ".join(repr(float(x.grad[i])) for i in range(n)))


main()
