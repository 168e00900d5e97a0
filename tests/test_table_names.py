"""Table names with punctuation are kept whole everywhere SQL names them (issue 38 item 7): the write tracker,
the tools' helpers, state hashes and the synthesis replays."""

import pytest

from agentworld_gym.env import AgentWorldEnv
from agentworld_gym.synthesis.facts import written_table
from agentworld_gym.tasks import Task
from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, id_col, sql_name

ODD_NAMES = ("posts/drops", "order-items", "a.b", 'say "hi"', "x y", "[br]", "tick`s", "50%")


@pytest.mark.parametrize("name", ODD_NAMES + ("plain",))
@pytest.mark.parametrize("verb", ["INSERT INTO {t} (a) VALUES (1)", "INSERT OR REPLACE INTO {t} (a) VALUES (1)",
                                  "REPLACE INTO {t} (a) VALUES (1)", "UPDATE {t} SET a = 1", "UPDATE OR IGNORE {t} SET a = 1",
                                  "DELETE FROM {t} WHERE a = 1", "  delete  from\n{t}"])
def test_written_table_keeps_the_whole_quoted_name(name, verb):
    assert written_table(verb.format(t=sql_name(name))) == name


@pytest.mark.parametrize("quoted, name", [("`posts/drops`", "posts/drops"), ("[posts/drops]", "posts/drops"),
                                          ("plain_name", "plain_name"), ('"a""b"', 'a"b')])
def test_written_table_reads_every_quoting_sqlite_accepts(quoted, name):
    assert written_table(f"UPDATE {quoted} SET a = 1") == name


def test_written_table_is_none_for_reads():
    assert written_table('SELECT * FROM "posts/drops"') is None


def _drops_theme(table: str) -> Theme:
    spec = ThemeSpec(id="drops", title="Drops", category="Testing", subcategory="Drops", label="drops", description="Drops.",
                     tables=(Table(table, (id_col("drop_id", "DR-"), choice_col("state", ["open", "done"])), rows=5),
                             Table("notes", (id_col("note_id", "NO-"), choice_col("state", ["a", "b"])), rows=3)))

    @tool(mode=WRITE, produces=("drop_id",), phrase="close {drop_id}")
    def close_drop(db: Db, drop_id: str) -> dict:
        """Close a drop.

        Args:
            drop_id: The drop.
        """
        db.get(table, drop_id)
        db.update(table, drop_id, state="done")
        return {"drop_id": drop_id, "state": "done"}

    @tool(mode=WRITE, produces=("drop_id",), phrase="add a drop")
    def add_drop(db: Db) -> dict:
        """Add a drop."""
        new = db.next_id(table, "DR-", 1001)
        db.insert(table, {"drop_id": new, "state": "open"})
        return {"drop_id": new}

    return Theme(spec, [close_drop, add_drop])


@pytest.mark.parametrize("table", ["posts/drops", 'say "hi"', "order-items"])
@pytest.mark.parametrize("requested", [True, False])
def test_an_episode_on_a_theme_with_punctuated_table_names_tracks_its_writes(table, requested):
    theme = _drops_theme(table)
    task = Task(id="drops-1", theme="drops", kind="graph", instruction="Close drop DR-1001.", difficulty=1,
                solution=({"name": "close_drop", "arguments": {"drop_id": "DR-1001"}},), answer=None,
                state_tables=(table,) if requested else ("notes",))
    env = AgentWorldEnv(theme, tasks=[task])
    env.reset(seed=0)
    before = env.state_hash([table])
    env.step('close_drop(drop_id="DR-1001")')
    env.step("add_drop()")
    assert env._written == {table}  # the whole name, not its first word
    assert env.state_hash([table]) != before
    # a write to a requested table is allowed; one to any other table is an unrequested change
    assert env._untouched() is requested
    env.close()
