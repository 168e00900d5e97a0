from typing import Literal

import pytest

from agentworld_gym import get_theme
from agentworld_gym.actions import ToolCall
from agentworld_gym.errors import ToolDefinitionError
from agentworld_gym.tools import WRITE, Db, ToolError, Toolset, tool, validate_arguments
from agentworld_gym.world import build_template, open_copy


def test_schema_is_derived_from_hints_and_docstring():
    @tool(mode=WRITE, produces=("order_id",))
    def refund(db: Db, order_id: str, amount: float, reason: Literal["damaged", "late"] = "late", notify: bool | None = None) -> dict:
        """Refund part of an order.

        Args:
            order_id: The order id.
            amount: How much to refund,
                at most the amount paid.
            reason: Why.
        Returns:
            The refund.
        """

    assert refund.description == "Refund part of an order."
    props = refund.parameters["properties"]
    assert props["order_id"] == {"type": "string", "description": "The order id."}
    assert props["amount"]["description"] == "How much to refund, at most the amount paid."
    assert props["reason"] == {"type": "string", "enum": ["damaged", "late"], "description": "Why.", "default": "late"}
    assert props["notify"] == {"type": "boolean"}
    assert refund.parameters["required"] == ["order_id", "amount"]
    assert refund.consumes == ("order_id",) and refund.writes


def test_untyped_parameter_is_a_definition_error():
    with pytest.raises(ToolDefinitionError, match="type hint"):
        @tool
        def bad(db, x):
            """Bad."""


@pytest.mark.parametrize("args, fragment", [
    ({}, "Missing required argument 'n'"),
    ({"n": "3"}, "expected integer, got string"),
    ({"n": True}, "expected integer, got boolean"),
    ({"n": 3, "m": 1}, "Unknown argument 'm'"),
    ({"n": 3, "mode": "z"}, "must be one of"),
    ({"n": 3, "tags": ["a", 2]}, "'tags[1]' expected string"),
])
def test_validation_messages(args, fragment):
    schema = {"type": "object", "additionalProperties": False, "required": ["n"], "properties": {
        "n": {"type": "integer"}, "mode": {"type": "string", "enum": ["x", "y"]}, "tags": {"type": "array", "items": {"type": "string"}}}}
    assert fragment in validate_arguments(schema, args)
    assert validate_arguments(schema, {"n": 3.0, "mode": "x", "tags": ["a"]}) is None


def test_failed_write_rolls_back_partial_changes():
    @tool(mode=WRITE)
    def half_write(db: Db, account_id: str) -> dict:
        """Writes, then fails.

        Args:
            account_id: An account.
        """
        db.update("accounts", account_id, balance=0)
        raise ToolError("nope")

    theme = get_theme("finance")
    conn = open_copy(build_template(theme.spec))
    db = theme.db(conn)
    before = db.value("SELECT balance FROM accounts WHERE account_id='AC-1001'")
    result = Toolset([half_write]).call(db, ToolCall("half_write", {"account_id": "AC-1001"}))
    assert not result.ok and result.content == "Error: nope"
    assert db.value("SELECT balance FROM accounts WHERE account_id='AC-1001'") == before


def test_positional_arguments_bind_in_order():
    theme = get_theme("finance")
    db = theme.db(open_copy(build_template(theme.spec)))
    r = theme.toolset.call(db, ToolCall("get_account", {}, ("AC-1001",)))
    assert r.ok and r.data["account_id"] == "AC-1001"
