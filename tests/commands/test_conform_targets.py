"""``fedtheory conform`` on targets that are not a factory taking no argument: exit 2 ("bad input") with one
sentence saying what was expected and what was given, never a traceback and exit 1 ("fails")."""
from __future__ import annotations

import pytest

from fedtheory.cli import main as cli_main

pytest.importorskip("hypothesis", reason="fedtheory conform needs the test extra (hypothesis)")

USER_MODULE = '''
from fedtheory.conformance.families.fedavg.variants import fedavg

def my_round(x, clients, *, state=None, rng=None, **hyper):
    return fedavg(x, clients, state=state, rng=rng, **hyper)

class NeedsLevels:
    def __init__(self, levels):
        self.levels = levels
    def __call__(self, x, clients, **hyper):
        return x

NOT_CALLABLE = 3

def returns_a_number():
    return 3.0

def returns_a_factory():
    return returns_a_number

def raises():
    raise RuntimeError("no GPU here")

def make():
    return my_round
'''


@pytest.fixture()
def user_module(tmp_path, monkeypatch):
    (tmp_path / "bad_targets_mod.py").write_text(USER_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


# (attribute, words the one sentence must contain): what was given and what was expected
BAD = [
    ("my_round", ["looks like a round function", "(x, clients", "no argument", "def make(): return my_round"]),
    ("NeedsLevels", ["class whose constructor needs levels", "no argument"]),
    ("NOT_CALLABLE", ["is not callable (it is the int 3)", "no argument"]),
    ("does_not_exist", ["has no attribute 'does_not_exist'"]),
    ("returns_a_number", ["must return the implementation", "got float 3.0"]),
    ("returns_a_factory", ["must return the implementation", "the function returns_a_number takes ()"]),
    ("raises", ["raised RuntimeError: no GPU here"]),
]


@pytest.mark.parametrize("attr,words", BAD, ids=[a for a, _ in BAD])
def test_a_bad_target_is_bad_input_with_one_sentence(user_module, capsys, attr, words):
    code = cli_main(["conform", f"bad_targets_mod:{attr}", "--as", "fedavg", "--out", str(user_module / "out")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err and len(err.strip().splitlines()) == 1, err
    for word in words:
        assert word in err, err
    assert not (user_module / "out").exists()  # nothing was checked, so no report


def test_a_compressor_target_must_return_an_object_with_compress(user_module, capsys):
    assert cli_main(["conform", "bad_targets_mod:make", "--as", "compressor"]) == 2
    assert "a compressor is an object with compress(x, rng) and omega, got the function my_round" in \
        capsys.readouterr().err


def test_the_right_factory_is_checked(user_module, capsys):
    """The same module's factory passes: the targets above were refused for what they are, not for the module."""
    assert cli_main(["conform", "bad_targets_mod:make", "--as", "fedavg", "--max-examples", "3",
                     "--out", str(user_module / "out")]) == 0
