"""What reproduce icl observes at a plateau (ag_attention._reproduce.icl_plateaus): rank M, the losses in se."""

from fractions import Fraction

from ag_attention._reproduce.icl import PLATEAU_COLUMNS, QUICK, eigenvalues, make_task, plateau_predictions, train
from ag_attention._reproduce.icl_plateaus import final_state, nearest_critical, observe, plateau_row, rank_at


def test_the_nearest_critical_value_prefers_the_smaller_subset_on_a_tie():
    crit = {(): Fraction(1), (0,): Fraction(1, 2), (1,): Fraction(3, 4), (0, 1): Fraction(1, 2)}
    assert nearest_critical(0.55, crit) == ((0,), Fraction(1, 2))
    assert nearest_critical(0.9, crit) == ((), Fraction(1))


def test_at_the_start_the_weights_sit_at_the_origin_on_the_plateau_l0():
    """Heads of scale 1e-3: rank M = 0, and the loss there is T = 1 = L_0 within its standard errors."""
    task = make_task(2, 7, 2000, 2000, seed=0)
    run = train(task, "separate", 2, 1e-3, 0.1, 20, seed=0, record_every=10)
    lam = eigenvalues(2)
    pred = plateau_predictions(lam, task.N)
    rank, M, s = rank_at(task, run, 0, lam)
    assert rank == 0 and M.shape == (2, 2) and len(s) == 2
    seen = observe(task, run, 0, pred, seed=1)
    assert seen["stratum"] == 0 and seen["predicted"] == "1" and abs(seen["z_train"]) < 4
    last = final_state(task, run, pred, seed=1)
    assert last["step"] == 20 and last["on_plateau"] is False
    p = {**seen, "first_step": 0, "last_step": 10, "loss": float(run.losses[0])}
    p["geometry"] = {"rank_M": 0, "active_heads": 0, "distance_to_M_S": 0.0}
    row = plateau_row(QUICK, run, p)
    assert len(row) == len(PLATEAU_COLUMNS) and row[4] == "L_0" and row[-1] == "-"
