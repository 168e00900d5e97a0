"""crypto: a decentralised exchange's wallets, tokens, balances, router allowances and swaps."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, money_col

FEE = 0.003  # the pool fee, 0.3 % of the input
UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
AMOUNTS = [5.0, 10.0, 25.0, 50.0, 120.0]

SPEC = ThemeSpec(
    id="crypto",
    title="Tidepool Exchange",
    category="Cryptocurrency & Web3",
    subcategory="DeFi & DEX Protocols",
    label="decentralised token exchange",
    description="You help users of a decentralised exchange with wallets, token balances, router allowances, quotes and swaps.",
    tables=(
        Table("wallets", (
            id_col("wallet_id", "WL-"), faker_col("owner", "name"), Column("address", "faker", ("hexify", "0x" + "^" * 40), unique=True),
            choice_col("chain", ["ethereum", "arbitrum", "base"], [0.5, 0.3, 0.2]),
            choice_col("status", ["active", "frozen"], [0.9, 0.1]), date_col("created", "2021-01-01", "2025-05-01"),
        ), rows=40),
        Table("tokens", (
            id_col("token_id", "TKN-", 101), Column("symbol", "faker", ("bothify", "???", UPPER), unique=True),
            money_col("price_usd", 0.05, 3500), money_col("liquidity_usd", 200_000, 20_000_000),
            choice_col("decimals", [6, 8, 18], [0.3, 0.2, 0.5], type="int"),
        ), rows=12),
        Table("balances", (
            id_col("balance_id", "BL-", 5001), fk_col("wallet_id", "wallets"), fk_col("token_id", "tokens"), money_col("amount", 0, 5000),
        ), rows=120),
        Table("allowances", (
            id_col("allowance_id", "AW-", 7001), fk_col("wallet_id", "wallets"), fk_col("token_id", "tokens"), money_col("amount", 0, 3000),
        ), rows=80),
        Table("swaps", (
            id_col("swap_id", "SW-", 9001), fk_col("wallet_id", "wallets"), fk_col("from_token_id", "tokens"), fk_col("to_token_id", "tokens"),
            money_col("amount_in", 1, 500), money_col("amount_out", 1, 500),
            choice_col("status", ["completed", "failed", "pending"], [0.85, 0.1, 0.05]), date_col("date", "2025-04-01", "2025-05-31"),
        ), rows=80),
    ),
    rules=(
        "Frozen wallets cannot swap, send, approve or revoke.",
        "A swap or transfer needs a token balance that covers the amount; a swap also needs the exchange router's allowance to cover it.",
        f"Swaps pay a {FEE:.1%} pool fee and fail when the price impact exceeds the slippage the user accepts.",
        "A token cannot be swapped for itself, and a wallet cannot send to itself.",
    ),
)


def _wallet(db: Db, wallet_id: str, active: bool = False) -> dict:
    wallet = db.get("wallets", wallet_id, "Wallet")
    if active and wallet["status"] != "active":
        raise ToolError(f"Wallet {wallet_id} is {wallet['status']}.")
    return wallet


def _balance(db: Db, wallet_id: str, token_id: str) -> float:
    return round(db.value("SELECT COALESCE(SUM(amount), 0) FROM balances WHERE wallet_id = ? AND token_id = ?", (wallet_id, token_id)), 6)


def _add_balance(db: Db, wallet_id: str, token_id: str, delta: float) -> float:
    """Change a holding by `delta`, keeping one balance row per (wallet, token)."""
    total = round(_balance(db, wallet_id, token_id) + delta, 6)
    rows = db.all("SELECT balance_id FROM balances WHERE wallet_id = ? AND token_id = ? ORDER BY balance_id", (wallet_id, token_id))
    if rows:
        db.update("balances", rows[0]["balance_id"], amount=total)
        for r in rows[1:]:  # merge duplicate holdings into the first row
            db.execute("DELETE FROM balances WHERE balance_id = ?", (r["balance_id"],))
    else:
        db.insert("balances", {"balance_id": db.next_id("balances", "BL-", 5001), "wallet_id": wallet_id, "token_id": token_id, "amount": total})
    return total


def _allowance(db: Db, wallet_id: str, token_id: str) -> dict | None:
    """The latest approval of the exchange router for (wallet, token): a later approval replaces earlier ones."""
    return db.one("SELECT * FROM allowances WHERE wallet_id = ? AND token_id = ? ORDER BY allowance_id DESC LIMIT 1", (wallet_id, token_id))


def _quote(db: Db, from_token_id: str, to_token_id: str, amount: float) -> dict:
    if from_token_id == to_token_id:
        raise ToolError("A token cannot be swapped for itself.")
    if amount <= 0:
        raise ToolError(f"The amount must be greater than zero, got {amount}.")
    src = db.get("tokens", from_token_id, "Token")
    dst = db.get("tokens", to_token_id, "Token")
    value = amount * src["price_usd"]
    pool = min(src["liquidity_usd"], dst["liquidity_usd"])
    impact = value / (pool + value)  # a constant-product pool moves the price by about this share
    out = amount * src["price_usd"] / dst["price_usd"] * (1 - FEE) * (1 - impact)
    return {"from_symbol": src["symbol"], "to_symbol": dst["symbol"], "amount_in": amount, "amount_out": round(out, 6),
            "price_impact_pct": round(impact * 100, 4), "fee": round(amount * FEE, 6), "value_usd": round(value, 2)}


@tool(produces=("wallet_id",), phrase="find the wallet with address {address}")
def find_wallet_by_address(db: Db, address: str) -> dict:
    """Find a wallet by its on-chain address.

    Args:
        address: The 0x address.
    """
    row = db.one("SELECT * FROM wallets WHERE lower(address) = lower(?)", (address.strip(),))
    if row is None:
        raise ToolError(f"No wallet with address {address!r}.")
    return row


@tool(produces=("wallet_id",), phrase="show the holdings of {wallet_id}")
def get_wallet(db: Db, wallet_id: str) -> dict:
    """Get a wallet with its token holdings and their total value in USD.

    Args:
        wallet_id: The wallet id, e.g. "WL-1001".
    """
    wallet = _wallet(db, wallet_id)
    holdings = db.all(
        "SELECT t.token_id, t.symbol, ROUND(SUM(b.amount), 6) AS amount, ROUND(SUM(b.amount) * t.price_usd, 2) AS value_usd "
        "FROM balances b JOIN tokens t ON t.token_id = b.token_id WHERE b.wallet_id = ? GROUP BY t.token_id ORDER BY t.symbol", (wallet_id,))
    total = round(sum(h["value_usd"] for h in holdings), 2)
    return {**wallet, "token_count": len(holdings), "total_value_usd": total, "holdings": holdings}


@tool(produces=("token_id",), phrase="look up the token with symbol {symbol}")
def get_token_by_symbol(db: Db, symbol: str) -> dict:
    """Find a token by its ticker symbol.

    Args:
        symbol: The symbol, e.g. "ABC".
    """
    row = db.one("SELECT * FROM tokens WHERE upper(symbol) = upper(?)", (symbol.strip(),))
    if row is None:
        raise ToolError(f"No token with symbol {symbol!r}.")
    return row


@tool(produces=("token_id",), phrase="look up {token_id}")
def get_token(db: Db, token_id: str) -> dict:
    """Get a token's symbol, USD price, pool liquidity and decimals.

    Args:
        token_id: The token id, e.g. "TKN-101".
    """
    return db.get("tokens", token_id, "Token")


@tool(produces=("token_id",), phrase="list the tradable tokens")
def list_tokens(db: Db) -> list:
    """List every token the exchange trades, by symbol."""
    return db.all("SELECT * FROM tokens ORDER BY symbol")


@tool(produces=("wallet_id", "token_id"), phrase="check how much of {token_id} {wallet_id} holds")
def get_balance(db: Db, wallet_id: str, token_id: str) -> dict:
    """How much of one token a wallet holds, and its USD value.

    Args:
        wallet_id: The wallet id.
        token_id: The token id.
    """
    _wallet(db, wallet_id)
    token = db.get("tokens", token_id, "Token")
    amount = _balance(db, wallet_id, token_id)
    return {"wallet_id": wallet_id, "token_id": token_id, "symbol": token["symbol"], "amount": amount,
            "value_usd": round(amount * token["price_usd"], 2)}


@tool(produces=("wallet_id", "token_id"), phrase="check how much of {token_id} the exchange may spend from {wallet_id}")
def get_allowance(db: Db, wallet_id: str, token_id: str) -> dict:
    """How much of a token the exchange router is approved to spend from a wallet.

    Args:
        wallet_id: The wallet id.
        token_id: The token id.
    """
    _wallet(db, wallet_id)
    token = db.get("tokens", token_id, "Token")
    row = _allowance(db, wallet_id, token_id)
    return {"wallet_id": wallet_id, "token_id": token_id, "symbol": token["symbol"], "allowance": row["amount"] if row else 0.0}


@tool(produces=("token_id",), phrase="quote a swap of {amount} of {from_token_id} into {to_token_id}", examples={"amount": AMOUNTS})
def quote_swap(db: Db, from_token_id: str, to_token_id: str, amount: float) -> dict:
    """Quote a swap: the output amount after the pool fee and price impact.

    Args:
        from_token_id: The token to sell.
        to_token_id: The token to buy.
        amount: How much of the token to sell.
    """
    return {"from_token_id": from_token_id, "to_token_id": to_token_id, **_quote(db, from_token_id, to_token_id, amount)}


@tool(produces=("swap_id", "wallet_id"), phrase="list the {status} swaps of {wallet_id}")
def list_swaps(db: Db, wallet_id: str, status: Literal["completed", "failed", "pending"] | None = None) -> list:
    """List a wallet's swaps, newest first.

    Args:
        wallet_id: The wallet id.
        status: Only swaps with this status.
    """
    _wallet(db, wallet_id)
    sql, params = "SELECT * FROM swaps WHERE wallet_id = ?", [wallet_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY date DESC, swap_id DESC", params)


@tool(mode=WRITE, produces=("allowance_id", "wallet_id", "token_id"), phrase="let the exchange spend up to {amount} of {token_id} from {wallet_id}",
      examples={"amount": [100.0, 250.0, 1000.0, 5000.0]}, bounds={"amount": (1e-8, 1e12)})
def approve_token(db: Db, wallet_id: str, token_id: str, amount: float) -> dict:
    """Approve the exchange router to spend up to an amount of a token (replaces any earlier approval).

    Args:
        wallet_id: The wallet id.
        token_id: The token id.
        amount: The new allowance, zero or more.
    """
    _wallet(db, wallet_id, active=True)
    db.get("tokens", token_id, "Token")
    if amount < 0:
        raise ToolError(f"The allowance cannot be negative, got {amount}.")
    old = _allowance(db, wallet_id, token_id)
    if old and abs(old["amount"] - amount) < 1e-9:
        raise ToolError(f"The allowance is already {amount}.")
    allowance_id = db.next_id("allowances", "AW-", 7001)
    db.execute("DELETE FROM allowances WHERE wallet_id = ? AND token_id = ?", (wallet_id, token_id))
    db.insert("allowances", {"allowance_id": allowance_id, "wallet_id": wallet_id, "token_id": token_id, "amount": round(amount, 6)})
    return {"allowance_id": allowance_id, "wallet_id": wallet_id, "token_id": token_id, "allowance": round(amount, 6),
            "previous_allowance": old["amount"] if old else 0.0}


@tool(mode=WRITE, produces=("swap_id", "wallet_id"),
      phrase="from {wallet_id}, swap {amount} of {from_token_id} for {to_token_id} accepting at most {max_slippage_pct}% slippage",
      examples={"amount": AMOUNTS, "max_slippage_pct": [0.5, 1.0, 3.0]}, bounds={"amount": (1e-8, 1e12), "max_slippage_pct": (0, 100)})
def swap_tokens(db: Db, wallet_id: str, from_token_id: str, to_token_id: str, amount: float, max_slippage_pct: float) -> dict:
    """Swap one token for another through the exchange router.

    Args:
        wallet_id: The wallet id.
        from_token_id: The token to sell.
        to_token_id: The token to buy.
        amount: How much to sell.
        max_slippage_pct: The largest price impact accepted, in percent.
    """
    _wallet(db, wallet_id, active=True)
    quote = _quote(db, from_token_id, to_token_id, amount)
    have = _balance(db, wallet_id, from_token_id)
    if have < amount:
        raise ToolError(f"Insufficient {quote['from_symbol']} balance: {have:g} held, {amount:g} needed.")
    allowance = _allowance(db, wallet_id, from_token_id)
    approved = allowance["amount"] if allowance else 0.0
    if approved < amount:
        raise ToolError(f"The exchange may spend only {approved:g} {quote['from_symbol']} from wallet {wallet_id}; approve at least {amount:g} first.")
    if quote["price_impact_pct"] > max_slippage_pct:
        raise ToolError(f"Price impact {quote['price_impact_pct']:.4f}% exceeds the accepted slippage of {max_slippage_pct}%.")
    _add_balance(db, wallet_id, from_token_id, -amount)
    _add_balance(db, wallet_id, to_token_id, quote["amount_out"])
    db.update("allowances", allowance["allowance_id"], amount=round(approved - amount, 6))
    swap_id = db.next_id("swaps", "SW-", 9001)
    db.insert("swaps", {"swap_id": swap_id, "wallet_id": wallet_id, "from_token_id": from_token_id, "to_token_id": to_token_id,
                        "amount_in": amount, "amount_out": quote["amount_out"], "status": "completed", "date": db.now[:10]})
    return {"swap_id": swap_id, "wallet_id": wallet_id, "status": "completed", "amount_out": quote["amount_out"], "price_impact_pct": quote["price_impact_pct"]}


@tool(mode=WRITE, produces=("wallet_id", "token_id"), phrase="send {amount} of {token_id} from {from_wallet_id} to {to_wallet_id}",
      examples={"amount": AMOUNTS}, bounds={"amount": (1e-8, 1e12)})
def transfer_tokens(db: Db, from_wallet_id: str, to_wallet_id: str, token_id: str, amount: float) -> dict:
    """Send tokens from one wallet to another on the same chain.

    Args:
        from_wallet_id: The sending wallet.
        to_wallet_id: The receiving wallet.
        token_id: The token to send.
        amount: How much to send.
    """
    if from_wallet_id == to_wallet_id:
        raise ToolError("A wallet cannot send to itself.")
    src = _wallet(db, from_wallet_id, active=True)
    dst = _wallet(db, to_wallet_id)
    token = db.get("tokens", token_id, "Token")
    if src["chain"] != dst["chain"]:
        raise ToolError(f"Wallet {from_wallet_id} is on {src['chain']} and wallet {to_wallet_id} on {dst['chain']}; use a bridge.")
    if amount <= 0:
        raise ToolError(f"The amount must be greater than zero, got {amount}.")
    have = _balance(db, from_wallet_id, token_id)
    if have < amount:
        raise ToolError(f"Insufficient {token['symbol']} balance: {have:g} held, {amount:g} needed.")
    left = _add_balance(db, from_wallet_id, token_id, -amount)
    _add_balance(db, to_wallet_id, token_id, amount)
    return {"from_wallet_id": from_wallet_id, "to_wallet_id": to_wallet_id, "token_id": token_id, "sent": amount, "balance_left": left}


@tool(mode=WRITE, produces=("wallet_id", "token_id"), phrase="revoke the exchange's allowance on {token_id} for {wallet_id}")
def revoke_allowance(db: Db, wallet_id: str, token_id: str) -> dict:
    """Remove the exchange router's allowance on a token.

    Args:
        wallet_id: The wallet id.
        token_id: The token id.
    """
    _wallet(db, wallet_id, active=True)
    db.get("tokens", token_id, "Token")
    row = _allowance(db, wallet_id, token_id)
    if row is None or row["amount"] <= 0:
        raise ToolError(f"Wallet {wallet_id} has no allowance on token {token_id} to revoke.")
    db.execute("DELETE FROM allowances WHERE wallet_id = ? AND token_id = ?", (wallet_id, token_id))
    return {"wallet_id": wallet_id, "token_id": token_id, "revoked": row["amount"]}


THEME = Theme(SPEC, [find_wallet_by_address, get_wallet, get_token_by_symbol, get_token, list_tokens, get_balance, get_allowance,
                     quote_swap, list_swaps, approve_token, swap_tokens, transfer_tokens, revoke_allowance])
