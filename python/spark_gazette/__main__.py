"""`python -m spark_gazette COMMAND`: the package's commands, each in a module of its own under
`spark_gazette.commands` that gives a one-line `SUMMARY`, `add_arguments(parser)` and
`run(args) -> exit status`. `python -m spark_gazette --help` lists them."""

from __future__ import annotations

import argparse
import importlib
import sys

# Command name -> its module; a command's module is imported to build its arguments.
COMMANDS = {
    "lag": "spark_gazette.commands.lag",
}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m spark_gazette", description="Commands of spark_gazette, the Gazette connector for Spark."
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name, module_name in COMMANDS.items():
        module = importlib.import_module(module_name)
        command = commands.add_parser(
            name,
            help=module.SUMMARY,
            description=module.__doc__,
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )
        module.add_arguments(command)
        command.set_defaults(run=module.run)
    args = parser.parse_args(argv)
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
