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


def _cached_finance(tmp_path, monkeypatch, db_seed=9):
    monkeypatch.setenv("AGENTWORLD_CACHE", str(tmp_path))
    monkeypatch.setattr(world_mod, "_TEMPLATES", {})
    spec = get_theme("finance").spec
    good = build_template(spec, db_seed)
    (path,) = (cache_dir() / "worlds").glob(f"finance-*-{db_seed}-1-g*.sqlite")
    monkeypatch.setattr(world_mod, "_TEMPLATES", {})
    return spec, good, path


def test_corrupt_disk_cache_is_rebuilt(tmp_path, monkeypatch):
    spec, good, path = _cached_finance(tmp_path, monkeypatch)
    path.write_bytes(b"garbage, half a file")
    with pytest.warns(RuntimeWarning, match="has no content hash"):
        assert build_template(spec, 9) == good
    assert world_mod.read_cached_world(path) == (good, None)
    assert not list(path.parent.glob("*.part"))


def _edited_value(blob: bytes) -> bytes:
    """The database with one stored value changed in place (still a valid SQLite file that opens and reads)."""
    conn = open_copy(blob)
    name = conn.execute("SELECT status FROM accounts LIMIT 1").fetchone()[0].encode()
    at = blob.index(name)
    edited = blob[:at] + bytes([blob[at] ^ 0x20]) + blob[at + 1:]  # one letter's case flipped
    check = open_copy(edited)
    assert check.execute("PRAGMA quick_check").fetchone()[0] == "ok"  # SQLite itself sees nothing wrong
    return edited


@pytest.mark.parametrize("damage", ["truncated to the header", "truncated to half", "truncated by one page", "trailer cut",
                                    "one edited value", "no trailer (older cache)",
                                    "empty file"])
def test_cache_files_that_fail_their_content_hash_are_rebuilt_never_served(tmp_path, monkeypatch, damage):
    spec, good, path = _cached_finance(tmp_path, monkeypatch)
    data = path.read_bytes()
    page = int.from_bytes(good[16:18], "big")
    damaged = {
        "truncated to the header": data[:100],
        "truncated to half": data[: len(good) // 2],
        "truncated by one page": good[:-page],
        "trailer cut": data[:-10],
        "one edited value": _edited_value(good) + data[len(good):],  # the trailer still names the original content
        "no trailer (older cache)": good,
        "empty file": b"",
    }[damage]
    path.write_bytes(damaged)
    with pytest.warns(RuntimeWarning, match="is not used and is being rebuilt"):
        served = build_template(spec, 9)
    assert served == good  # the rebuilt world, never the damaged one
    assert path.read_bytes() == data  # and the cache holds it again
    assert not list(path.parent.glob("*.part"))


def test_an_intact_cache_file_is_served_without_a_warning(tmp_path, monkeypatch):
    spec, good, path = _cached_finance(tmp_path, monkeypatch)
    monkeypatch.setattr(world_mod, "build_database", lambda *a: pytest.fail("rebuilt an intact cache entry"))
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert build_template(spec, 9) == good


def test_authorizer_blocks_attach_and_runaway_queries_stop():
    conn = open_copy(build_template(get_theme("finance").spec))
    with pytest.raises(sqlite3.DatabaseError):
        conn.execute("ATTACH DATABASE '/tmp/x.db' AS x")
    conn.start_call()
    with pytest.raises(sqlite3.OperationalError, match="interrupt"):
        conn.execute("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT COUNT(*) FROM c").fetchone()


def test_a_cache_file_with_its_trailer_still_opens_as_the_database(tmp_path, monkeypatch):
    """Older versions read cache files without the trailer check: SQLite ignores the bytes after the last page."""
    spec, good, path = _cached_finance(tmp_path, monkeypatch)
    data = path.read_bytes()
    assert len(data) > len(good)
    a, b = open_copy(data), open_copy(good)
    assert state_hash(a) == state_hash(b) and a.execute("PRAGMA quick_check").fetchone()[0] == "ok"
