"""`python -m agentworld_gym.mcp serve THEME ...`: the same as `agentworld serve`, without loading the other commands."""

from __future__ import annotations

import argparse
import sys

from .cli import add_commands


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m agentworld_gym.mcp")
    add_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    return args.func(args) or 0


if __name__ == "__main__":
    sys.exit(main())
