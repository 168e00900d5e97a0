"""finance: a retail bank's customers, accounts, cards, transactions and transfers."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, money_col

DAILY_TRANSFER_LIMIT = 5_000.0

SPEC = ThemeSpec(
    id="finance",
    title="Northwind Bank",
    category="Finance & Markets",
    subcategory="Financial Analysis & Portfolio",
    label="retail banking",
    description="You help bank customers with their accounts, cards, payments and transfers.",
    tables=(
        Table("customers", (
            id_col("customer_id", "CU-"), faker_col("name", "name"), faker_col("email", "email"),
            faker_col("city", "city"), choice_col("tier", ["standard", "gold", "private"], [0.7, 0.2, 0.1]),
            date_col("joined", "2015-01-01", "2025-01-31"),
        ), rows=40),
        Table("accounts", (
            id_col("account_id", "AC-"), fk_col("customer_id", "customers"),
            choice_col("type", ["checking", "savings", "credit"], [0.5, 0.35, 0.15]),
            money_col("balance", 0, 25_000), choice_col("currency", ["USD", "EUR", "GBP"], [0.8, 0.15, 0.05]),
            choice_col("status", ["active", "frozen", "closed"], [0.85, 0.1, 0.05]), date_col("opened", "2016-01-01", "2025-03-31"),
        ), rows=80),
        Table("cards", (
            id_col("card_id", "CD-", 2001), fk_col("account_id", "accounts"),
            choice_col("network", ["visa", "mastercard", "amex"]), choice_col("status", ["active", "blocked", "expired"], [0.8, 0.1, 0.1]),
            money_col("spending_limit", 500, 10_000), date_col("expires", "2025-07-01", "2029-12-31"),
        ), rows=60),
        Table("transactions", (
            id_col("transaction_id", "TX-", 5001), fk_col("account_id", "accounts"), money_col("amount", 2, 2_500),
            choice_col("direction", ["debit", "credit"], [0.7, 0.3]),
            choice_col("category", ["groceries", "travel", "dining", "utilities", "salary", "shopping", "rent"]),
            faker_col("merchant", "company"), date_col("date", "2025-01-01", "2025-05-31"),
            choice_col("status", ["posted", "pending", "disputed"], [0.85, 0.12, 0.03]),
        ), rows=300),
        Table("transfers", (
            id_col("transfer_id", "TR-", 8001), fk_col("from_account_id", "accounts"), fk_col("to_account_id", "accounts"),
            money_col("amount", 10, 3_000), date_col("date", "2025-01-01", "2025-05-31"),
            choice_col("status", ["completed", "scheduled", "cancelled"], [0.8, 0.15, 0.05]),
        ), rows=40),
    ),
    rules=(
        "Money can only move out of an active account, and only if its balance covers the amount.",
        f"Transfers from one account are limited to {DAILY_TRANSFER_LIMIT:,.0f} per day in total.",
        "Transfers must be between two different accounts in the same currency.",
        "Only posted debit transactions can be disputed, and only once.",
        "A blocked card can be unblocked only while its account is active; expired cards cannot change status.",
        "An account can be closed only when its balance is exactly zero.",
    ),
)


def _active_account(db: Db, account_id: str) -> dict:
    acc = db.get("accounts", account_id, "Account")
    if acc["status"] != "active":
        raise ToolError(f"Account {account_id} is {acc['status']}; only active accounts can do this.")
    return acc


@tool(produces=("customer_id",), phrase="look up the profile of {customer_id}")
def get_customer(db: Db, customer_id: str) -> dict:
    """Get a customer's profile and the ids of their accounts.

    Args:
        customer_id: The customer id, e.g. "CU-1001".
    """
    customer = db.get("customers", customer_id, "Customer")
    customer["account_ids"] = [r["account_id"] for r in db.all("SELECT account_id FROM accounts WHERE customer_id = ? ORDER BY account_id", (customer_id,))]
    return customer


@tool(produces=("customer_id",), phrase="find the customer whose email is {email}")
def find_customer_by_email(db: Db, email: str) -> dict:
    """Find a customer by their email address.

    Args:
        email: The customer's email address.
    """
    row = db.one("SELECT * FROM customers WHERE lower(email) = lower(?)", (email.strip(),))
    if row is None:
        raise ToolError(f"No customer with email {email!r}.")
    return row


@tool(produces=("account_id", "customer_id"), phrase="look up {account_id}")
def get_account(db: Db, account_id: str) -> dict:
    """Get an account's type, balance, currency, status and owner.

    Args:
        account_id: The account id, e.g. "AC-1001".
    """
    return db.get("accounts", account_id, "Account")


@tool(produces=("account_id",), phrase="list the {status} accounts of {customer_id}")
def list_accounts(db: Db, customer_id: str, status: Literal["active", "frozen", "closed"] | None = None) -> list:
    """List a customer's accounts, optionally only those with a given status.

    Args:
        customer_id: The customer id.
        status: Only accounts with this status.
    """
    db.get("customers", customer_id, "Customer")
    sql, params = "SELECT * FROM accounts WHERE customer_id = ?", [customer_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY account_id", params)


@tool(produces=("transaction_id", "account_id"), phrase="list the {category} transactions of {account_id}",
      examples={"category": ["groceries", "travel", "dining", "utilities", "shopping"]})
def list_transactions(db: Db, account_id: str, category: str | None = None, limit: int = 20) -> list:
    """List an account's most recent transactions, newest first.

    Args:
        account_id: The account id.
        category: Only transactions in this category (e.g. "groceries").
        limit: How many to return, at most 100.
    """
    db.get("accounts", account_id, "Account")
    if not 1 <= limit <= 100:
        raise ToolError(f"limit must be between 1 and 100, got {limit}.")
    sql, params = "SELECT * FROM transactions WHERE account_id = ?", [account_id]
    if category:
        sql, params = sql + " AND category = ?", params + [category]
    return db.all(sql + " ORDER BY date DESC, transaction_id DESC LIMIT ?", params + [limit])


@tool(produces=("transaction_id", "account_id"), phrase="look up {transaction_id}")
def get_transaction(db: Db, transaction_id: str) -> dict:
    """Get one transaction.

    Args:
        transaction_id: The transaction id, e.g. "TX-5001".
    """
    return db.get("transactions", transaction_id, "Transaction")


@tool(produces=("card_id", "account_id"), phrase="look up {card_id}")
def get_card(db: Db, card_id: str) -> dict:
    """Get a card's network, status, spending limit, expiry and account.

    Args:
        card_id: The card id, e.g. "CD-2001".
    """
    return db.get("cards", card_id, "Card")


@tool(produces=("account_id",), phrase="work out how much {account_id} spent on {category} this year",
      examples={"category": ["groceries", "travel", "dining", "utilities", "shopping", "rent"]})
def spending_summary(db: Db, account_id: str, category: str) -> dict:
    """Total posted debits of an account in one category since the start of the year.

    Args:
        account_id: The account id.
        category: The spending category, e.g. "groceries".
    """
    db.get("accounts", account_id, "Account")
    row = db.one(
        "SELECT COUNT(*) AS transactions, ROUND(COALESCE(SUM(amount), 0), 2) AS total FROM transactions "
        "WHERE account_id = ? AND category = ? AND direction = 'debit' AND status = 'posted' AND date >= '2025-01-01'",
        (account_id, category),
    )
    return {"account_id": account_id, "category": category, **row}


@tool(mode=WRITE, produces=("transfer_id", "account_id"), phrase="transfer {amount} from {from_account_id} to {to_account_id}",
      examples={"amount": [25.0, 50.0, 120.0, 300.0, 75.5]}, bounds={"amount": (0.01, 1e9)})
def transfer_funds(db: Db, from_account_id: str, to_account_id: str, amount: float) -> dict:
    """Move money between two accounts in the same currency.

    Args:
        from_account_id: The account the money leaves.
        to_account_id: The account the money goes to.
        amount: The amount, greater than zero.
    """
    if amount <= 0:
        raise ToolError(f"The amount must be greater than zero, got {amount}.")
    if from_account_id == to_account_id:
        raise ToolError("Cannot transfer from an account to itself.")
    src = _active_account(db, from_account_id)
    dst = _active_account(db, to_account_id)
    if src["currency"] != dst["currency"]:
        raise ToolError(f"Currency mismatch: {src['currency']} account to {dst['currency']} account.")
    if src["balance"] < amount:
        raise ToolError(f"Insufficient funds: balance {src['balance']:.2f}, requested {amount:.2f}.")
    today = db.now[:10]
    sent = db.value("SELECT COALESCE(SUM(amount), 0) FROM transfers WHERE from_account_id = ? AND date = ? AND status = 'completed'", (from_account_id, today))
    if sent + amount > DAILY_TRANSFER_LIMIT:
        raise ToolError(f"Daily transfer limit of {DAILY_TRANSFER_LIMIT:.2f} exceeded ({sent:.2f} already sent today).")
    transfer_id = db.next_id("transfers", "TR-", 8001)
    db.insert("transfers", {"transfer_id": transfer_id, "from_account_id": from_account_id, "to_account_id": to_account_id,
                            "amount": round(amount, 2), "date": today, "status": "completed"})
    db.update("accounts", from_account_id, balance=round(src["balance"] - amount, 2))
    db.update("accounts", to_account_id, balance=round(dst["balance"] + amount, 2))
    return {"transfer_id": transfer_id, "status": "completed", "from_balance": round(src["balance"] - amount, 2)}


@tool(mode=WRITE, produces=("card_id",), phrase="set the status of {card_id} to {status}")
def set_card_status(db: Db, card_id: str, status: Literal["active", "blocked"]) -> dict:
    """Block or unblock a card.

    Args:
        card_id: The card id.
        status: The new status.
    """
    card = db.get("cards", card_id, "Card")
    if card["status"] == "expired":
        raise ToolError(f"Card {card_id} has expired; its status cannot change.")
    if card["status"] == status:
        raise ToolError(f"Card {card_id} is already {status}.")
    if status == "active":
        _active_account(db, card["account_id"])
    db.update("cards", card_id, status=status)
    return {"card_id": card_id, "status": status}


@tool(mode=WRITE, produces=("transaction_id",), phrase="dispute {transaction_id}")
def dispute_transaction(db: Db, transaction_id: str, reason: str = "not recognised") -> dict:
    """Open a dispute on a posted debit transaction.

    Args:
        transaction_id: The transaction id.
        reason: Why the customer disputes it.
    """
    tx = db.get("transactions", transaction_id, "Transaction")
    if tx["status"] == "disputed":
        raise ToolError(f"Transaction {transaction_id} is already disputed.")
    if tx["status"] != "posted" or tx["direction"] != "debit":
        raise ToolError(f"Only posted debits can be disputed; {transaction_id} is a {tx['status']} {tx['direction']}.")
    db.update("transactions", transaction_id, status="disputed")
    return {"transaction_id": transaction_id, "status": "disputed", "amount": tx["amount"]}


@tool(mode=WRITE, produces=("account_id",), phrase="close {account_id}")
def close_account(db: Db, account_id: str) -> dict:
    """Close an account whose balance is zero.

    Args:
        account_id: The account id.
    """
    acc = db.get("accounts", account_id, "Account")
    if acc["status"] == "closed":
        raise ToolError(f"Account {account_id} is already closed.")
    if abs(acc["balance"]) > 0.005:
        raise ToolError(f"Account {account_id} still holds {acc['balance']:.2f}; move the money out first.")
    db.update("accounts", account_id, status="closed")
    return {"account_id": account_id, "status": "closed"}


THEME = Theme(SPEC, [get_customer, find_customer_by_email, get_account, list_accounts, list_transactions, get_transaction,
                     get_card, spending_summary, transfer_funds, set_card_status, dispute_transaction, close_account])
