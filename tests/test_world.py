import sqlite3

import pytest

from agentworld_gym import get_theme
from agentworld_gym import world as world_mod
from agentworld_gym.world import build_database, build_template, cache_dir, open_copy, state_hash


def test_build_is_deterministic_and_seed_dependent():
    spec = get_theme("finance").spec
    a = build_database(spec, 3).serialize()
    b = build_database(spec, 3).serialize()
    c = build_database(spec, 4).serialize()
    assert state_hash(open_copy(a)) == state_hash(open_copy(b)) != state_hash(open_copy(c))


def test_scale_grows_rows():
    spec = get_theme("finance").spec
    small, big = open_copy(build_template(spec, 0, 1.0)), open_copy(build_template(spec, 0, 2.0))
    n = lambda conn: conn.execute("SELECT COUNT(*) FROM transactions").fetchone()[0]  # noqa: E731
    assert n(big) == 2 * n(small)


def test_foreign_keys_point_at_existing_rows():
    conn = open_copy(build_template(get_theme("finance").spec))
    orphans = conn.execute("SELECT COUNT(*) FROM cards WHERE account_id NOT IN (SELECT account_id FROM accounts)").fetchone()[0]
    assert orphans == 0


def test_copies_are_private():
    blob = build_template(get_theme("finance").spec)
    a, b = open_copy(blob), open_copy(blob)
    a.execute("DELETE FROM transactions")
    assert b.execute("SELECT COUNT(*) FROM transactions").fetchone()[0] > 0


def test_corrupt_disk_cache_is_rebuilt(tmp_path, monkeypatch):
    monkeypatch.setenv("AGENTWORLD_CACHE", str(tmp_path))
    monkeypatch.setattr(world_mod, "_TEMPLATES", {})
    spec = get_theme("finance").spec
    good = build_template(spec, 9)
    (path,) = (cache_dir() / "worlds").glob("finance-*-9-1-g*.sqlite")
    path.write_bytes(b"garbage, half a file")
    monkeypatch.setattr(world_mod, "_TEMPLATES", {})
    assert build_template(spec, 9) == good
    assert path.read_bytes() == good
    assert not list(path.parent.glob("*.part"))


def test_authorizer_blocks_attach_and_runaway_queries_stop():
    conn = open_copy(build_template(get_theme("finance").spec))
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("ATTACH DATABASE '/tmp/x.db' AS x")
    conn.start_call()
    with pytest.raises(sqlite3.OperationalError, match="interrupt"):
        conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c").fetchone()
