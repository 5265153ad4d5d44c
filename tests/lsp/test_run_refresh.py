"""How often a run's lenses refresh: every 0.25 s while sending the board is cheap, less often once it
is not, so that sending it to the worker takes at most a twentieth of the LSP process's time."""

from __future__ import annotations

from evalspec_lsp.features.run import BOARD_SHARE, REFRESH_EVERY_S, refresh_every


def test_a_cheap_board_refreshes_at_the_base_rate() -> None:
    assert refresh_every(0.0) == REFRESH_EVERY_S
    assert refresh_every(0.001) == REFRESH_EVERY_S


def test_a_costly_board_refreshes_less_often_in_proportion() -> None:
    assert refresh_every(0.1) == 0.1 * BOARD_SHARE
    assert refresh_every(0.5) > refresh_every(0.1)

