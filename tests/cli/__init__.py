"""The command line (ag_attention._cli), one test module per module of it; the helpers they share."""

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
