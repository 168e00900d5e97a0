"""SQL identifiers kept whole: one quoting rule for the world, its tools and the realism checks."""


def sql_name(name: str) -> str:
    """`name` as a quoted SQL identifier: kept whole whatever it holds (slashes, spaces, quotes)."""
    return '"' + name.replace('"', '""') + '"'
