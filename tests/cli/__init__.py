"""The command line (ag_attention._cli), one test module per module of it; the helpers they share."""

from typing import NamedTuple

from ag_attention._cli import main


def run_main(argv, capsys):
    """``main(argv)``'s exit status, standard output and standard error."""
    status = main(argv) if isinstance(argv, list) else None
    out = capsys.readouterr()
    return status, out.out, out.err


def exit_of(argv, capsys):
    """Exit status of ``main(argv)``, with argparse's SystemExit turned into its status (and the output)."""
    try:
        status = main(argv)
    except SystemExit as exc:
        status = exc.code
    out = capsys.readouterr()
    return status, out.out, out.err


class Ran(NamedTuple):
    """What a run of the command gave: its exit status, standard output and standard error (the fields of
    ``subprocess.CompletedProcess`` that :func:`tests.helpers.run_cli` gives)."""

    returncode: int
    stdout: str
    stderr: str


def run_in_process(capsys, *args) -> Ran:
    """``ag-attention ARGS`` run by ``main`` in this process (as :func:`tests.helpers.run_cli` runs it in a new one,
    without its second of start-up): its exit status (argparse's too) and only its own output."""
    capsys.readouterr()  # what the test printed before is not the command's
    status, out, err = exit_of(list(args), capsys)
    return Ran(status, out, err)
