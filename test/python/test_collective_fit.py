"""bench/collectives/fit.py's rule for moving a fabric class's constants:
the fit must lower the class's geomean calibration error by more than the
grid's flat optimum with any one of its points left out."""
import importlib.util
import math
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("collectives_fit",
                                               ROOT / "bench" / "collectives" / "fit.py")
fit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fit)


def errors(values):
    return {("sweep", 1 << i): v for i, v in enumerate(values)}


def test_a_gain_every_point_shares_moves_the_class():
    kept = errors([0.20] * 50)
    fitted = errors([0.18] * 50)
    assert fit.improves_without_any_one_point(kept, fitted)


def test_a_gain_one_point_carries_does_not():
    # One point's error falls from 1.0 to 0.1; the other 99 do not move.
    # Over all 100 the geomean error falls by more than the flat optimum ...
    kept = errors([1.0] + [0.15] * 99)
    fitted = errors([0.1] + [0.15] * 99)
    mean = lambda e: math.exp(sum(e.values()) / len(e)) - 1
    assert mean(kept) - mean(fitted) > fit.FLAT_OPTIMUM
    # ... but not with that point left out.
    assert not fit.improves_without_any_one_point(kept, fitted)


def test_no_gain_or_a_loss_does_not():
    kept = errors([0.2, 0.3, 0.1])
    assert not fit.improves_without_any_one_point(kept, dict(kept))
    assert not fit.improves_without_any_one_point(kept, errors([0.3, 0.4, 0.2]))
    # A class with a single point cannot leave one out.
    assert not fit.improves_without_any_one_point(errors([0.5]), errors([0.1]))
