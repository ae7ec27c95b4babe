"""The bundled Matmul API examples run unmodified through the pyasc compatibility runner and check their
results against NumPy themselves (cube only with bias and four cores, MIX with a LeakyReLU epilogue on the
vector cores, a batch with broadcast B)."""
from pathlib import Path

import pytest
from test_compat import run_pyasc

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


@pytest.mark.parametrize("name", ["matmul_api_basic", "matmul_api_leakyrelu", "matmul_api_batch"])
def test_example_runs_through_the_pyasc_runner(name):
    res = run_pyasc(str(EXAMPLES / f"{name}.py"))
    assert res.returncode == 0, res.stderr[-3000:]
    assert f"{name} ok" in res.stdout
