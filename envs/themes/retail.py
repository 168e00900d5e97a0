"""retail: an online shop's customers, products, orders, order lines and returns."""

from __future__ import annotations

from datetime import date
from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col, money_col

RETURN_WINDOW_DAYS = 30
MAX_QUANTITY = 10
CATEGORIES = ("electronics", "home", "kitchen", "outdoors", "toys", "beauty", "books")
RETURN_REASONS = ("damaged", "wrong item", "no longer needed", "not as described")
PRODUCT_NAMES = (
    "Wireless Earbuds", "Bluetooth Speaker", "USB-C Charger", "Smart Watch", "Desk Lamp", "Throw Blanket",
    "Ceramic Vase", "Chef's Knife", "Cast Iron Skillet", "French Press", "Stand Mixer", "Camping Tent",
    "Hiking Backpack", "Water Bottle", "Trail Headlamp", "Building Blocks Set", "Plush Bear", "Puzzle 1000 pcs",
    "Face Serum", "Hair Dryer", "Lip Balm Set", "Cookbook", "Mystery Novel", "Travel Guide", "Yoga Mat",
    "Noise-Cancelling Headphones", "Air Fryer", "Scented Candle", "Picnic Cooler", "Board Game",
)

SPEC = ThemeSpec(
    id="retail",
    title="Brightcart Online Store",
    category="Data Storage & Databases",
    subcategory="Relational Databases",
    label="e-commerce order database",
    description="You help shoppers and staff with customers, the product catalogue, orders, returns and refunds.",
    tables=(
        Table("customers", (
            id_col("customer_id", "CU-"), faker_col("name", "name"), faker_col("email", "email", unique=True),
            faker_col("city", "city"), choice_col("loyalty", ["bronze", "silver", "gold"], [0.6, 0.3, 0.1]),
            date_col("joined", "2018-01-01", "2025-04-30"),
        ), rows=40),
        Table("products", (
            id_col("product_id", "PR-", 2001), Column("sku", "faker", ("numerify", "SKU-#####"), unique=True),
            choice_col("name", PRODUCT_NAMES), choice_col("category", CATEGORIES), money_col("price", 5, 600),
            int_col("stock", 0, 40), choice_col("status", ["active", "discontinued"], [0.9, 0.1]),
        ), rows=45),
        Table("orders", (
            id_col("order_id", "OR-", 5001), fk_col("customer_id", "customers"),
            choice_col("status", ["pending", "processing", "shipped", "delivered", "cancelled"], [0.2, 0.15, 0.15, 0.4, 0.1]),
            date_col("placed", "2025-03-01", "2025-04-15"),
            date_col("updated", "2025-04-16", "2025-05-31"),  # when the order reached its status (delivery date if delivered)
            choice_col("payment_method", ["card", "paypal", "gift card"], [0.7, 0.2, 0.1]), faker_col("ship_to_city", "city"),
        ), rows=70),
        Table("order_items", (
            id_col("item_id", "IT-", 7001), fk_col("order_id", "orders"), fk_col("product_id", "products"),
            int_col("quantity", 1, 3), money_col("unit_price", 5, 600),
        ), rows=180),
        Table("returns", (
            id_col("return_id", "RT-", 9001), fk_col("item_id", "order_items"), choice_col("reason", RETURN_REASONS),
            choice_col("status", ["requested", "approved", "refunded", "rejected"], [0.35, 0.2, 0.3, 0.15]),
            money_col("refund_amount", 0, 40), date_col("created", "2025-04-20", "2025-05-31"),
        ), rows=25),
    ),
    rules=(
        "Only pending orders can be cancelled; cancelling puts the items back in stock.",
        f"An item can be returned only from a delivered order, within {RETURN_WINDOW_DAYS} days of delivery, and only once.",
        "A refund can never exceed what was paid for the returned item minus what was already refunded for it.",
        f"New orders need an active product with enough stock; at most {MAX_QUANTITY} units per order line.",
    ),
)


def _order_total(db: Db, order_id: str) -> float:
    return round(db.value("SELECT COALESCE(SUM(quantity * unit_price), 0) FROM order_items WHERE order_id = ?", (order_id,)), 2)


def _days_between(earlier: str, later: str) -> int:
    return (date.fromisoformat(later[:10]) - date.fromisoformat(earlier[:10])).days


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


@tool(produces=("customer_id",), phrase="look up the profile of {customer_id}")
def get_customer(db: Db, customer_id: str) -> dict:
    """Get a customer's profile, how many orders they placed and the ids of those orders.

    Args:
        customer_id: The customer id, e.g. "CU-1001".
    """
    customer = db.get("customers", customer_id, "Customer")
    ids = [r["order_id"] for r in db.all("SELECT order_id FROM orders WHERE customer_id = ? ORDER BY order_id", (customer_id,))]
    return {**customer, "order_count": len(ids), "order_ids": ids}


@tool(produces=("order_id", "customer_id"), phrase="list the {status} orders of {customer_id}")
def list_orders(db: Db, customer_id: str,
                status: Literal["pending", "processing", "shipped", "delivered", "cancelled"] | None = None) -> list:
    """List a customer's orders with their totals, newest first.

    Args:
        customer_id: The customer id.
        status: Only orders with this status.
    """
    db.get("customers", customer_id, "Customer")
    sql, params = "SELECT * FROM orders WHERE customer_id = ?", [customer_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    rows = db.all(sql + " ORDER BY placed DESC, order_id DESC", params)
    return [{**r, "total": _order_total(db, r["order_id"])} for r in rows]


@tool(produces=("order_id", "customer_id"), phrase="look up {order_id}")
def get_order(db: Db, order_id: str) -> dict:
    """Get an order with its line items and total.

    Args:
        order_id: The order id, e.g. "OR-5001".
    """
    order = db.get("orders", order_id, "Order")
    items = db.all(
        "SELECT i.item_id, i.product_id, p.name AS product_name, i.quantity, i.unit_price FROM order_items i "
        "JOIN products p ON p.product_id = i.product_id WHERE i.order_id = ? ORDER BY i.item_id", (order_id,))
    return {**order, "total": _order_total(db, order_id), "item_count": len(items), "items": items}


@tool(produces=("product_id",), phrase="list the active {category} products")
def search_products(db: Db, category: Literal[CATEGORIES], max_price: float | None = None, in_stock_only: bool = False) -> list:
    """Search active products in a category, cheapest first.

    Args:
        category: The product category.
        max_price: Only products at or below this price.
        in_stock_only: Only products with stock left.
    """
    sql, params = "SELECT * FROM products WHERE category = ? AND status = 'active'", [category]
    if max_price is not None:
        sql, params = sql + " AND price <= ?", params + [max_price]
    if in_stock_only:
        sql += " AND stock > 0"
    return db.all(sql + " ORDER BY price, product_id", params)


@tool(produces=("product_id",), phrase="look up {product_id}")
def get_product(db: Db, product_id: str) -> dict:
    """Get a product's name, category, price, stock and status.

    Args:
        product_id: The product id, e.g. "PR-2001".
    """
    return db.get("products", product_id, "Product")


@tool(produces=("return_id", "item_id", "order_id"), phrase="look up {return_id}")
def get_return(db: Db, return_id: str) -> dict:
    """Get a return request, its refund so far and the order it belongs to.

    Args:
        return_id: The return id, e.g. "RT-9001".
    """
    ret = db.get("returns", return_id, "Return")
    item = db.get("order_items", ret["item_id"], "Item")
    return {**ret, "order_id": item["order_id"], "paid": round(item["quantity"] * item["unit_price"], 2)}


@tool(mode=WRITE, produces=("order_id", "item_id", "customer_id", "product_id"),
      phrase="order {quantity} of {product_id} for {customer_id}", examples={"quantity": [1, 2, 3]})
def place_order(db: Db, customer_id: str, product_id: str, quantity: int) -> dict:
    """Place a new order of one product for a customer (paid by card).

    Args:
        customer_id: The customer placing the order.
        product_id: The product to buy.
        quantity: How many units, 1 to 10.
    """
    db.get("customers", customer_id, "Customer")
    product = db.get("products", product_id, "Product")
    if not 1 <= quantity <= MAX_QUANTITY:
        raise ToolError(f"Quantity must be between 1 and {MAX_QUANTITY}, got {quantity}.")
    if product["status"] != "active":
        raise ToolError(f"Product {product_id} is {product['status']} and cannot be ordered.")
    if product["stock"] < quantity:
        raise ToolError(f"Not enough stock for {product_id}: {product['stock']} left, {quantity} requested.")
    today = db.now[:10]
    order_id = db.next_id("orders", "OR-", 5001)
    item_id = db.next_id("order_items", "IT-", 7001)
    city = db.get("customers", customer_id)["city"]
    db.insert("orders", {"order_id": order_id, "customer_id": customer_id, "status": "pending", "placed": today,
                         "updated": today, "payment_method": "card", "ship_to_city": city})
    db.insert("order_items", {"item_id": item_id, "order_id": order_id, "product_id": product_id, "quantity": quantity,
                              "unit_price": product["price"]})
    db.update("products", product_id, stock=product["stock"] - quantity)
    return {"order_id": order_id, "item_id": item_id, "customer_id": customer_id, "product_id": product_id, "status": "pending",
            "total": round(quantity * product["price"], 2),
            "stock_left": product["stock"] - quantity}


@tool(mode=WRITE, produces=("order_id",), phrase="cancel {order_id}")
def cancel_order(db: Db, order_id: str) -> dict:
    """Cancel a pending order and put its items back in stock.

    Args:
        order_id: The order id.
    """
    order = db.get("orders", order_id, "Order")
    if order["status"] != "pending":
        raise ToolError(f"Order {order_id} is {order['status']}; only pending orders can be cancelled.")
    items = db.all("SELECT product_id, quantity FROM order_items WHERE order_id = ? ORDER BY item_id", (order_id,))
    for item in items:
        db.execute("UPDATE products SET stock = stock + ? WHERE product_id = ?", (item["quantity"], item["product_id"]))
    db.update("orders", order_id, status="cancelled", updated=db.now[:10])
    return {"order_id": order_id, "status": "cancelled", "refund_due": _order_total(db, order_id),
            "units_restocked": sum(i["quantity"] for i in items)}


@tool(mode=WRITE, produces=("return_id", "item_id"), phrase="request a return of {item_id} because it is {reason}")
def request_return(db: Db, item_id: str, reason: Literal[RETURN_REASONS]) -> dict:
    """Open a return for one line item of a delivered order.

    Args:
        item_id: The order line item id, e.g. "IT-7001".
        reason: Why the item is being returned.
    """
    item = db.get("order_items", item_id, "Item")
    order = db.get("orders", item["order_id"], "Order")
    if order["status"] != "delivered":
        raise ToolError(f"Order {order['order_id']} is {order['status']}; only delivered orders can be returned.")
    age = _days_between(order["updated"], db.now)
    if age > RETURN_WINDOW_DAYS:
        raise ToolError(f"Order {order['order_id']} was delivered {age} days ago; returns close after {RETURN_WINDOW_DAYS} days.")
    if db.value("SELECT COUNT(*) FROM returns WHERE item_id = ? AND status != 'rejected'", (item_id,)):
        raise ToolError(f"Item {item_id} already has a return.")
    return_id = db.next_id("returns", "RT-", 9001)
    db.insert("returns", {"return_id": return_id, "item_id": item_id, "reason": reason, "status": "requested",
                          "refund_amount": 0.0, "created": db.now[:10]})
    return {"return_id": return_id, "item_id": item_id, "status": "requested",
            "refundable": round(item["quantity"] * item["unit_price"], 2)}


@tool(mode=WRITE, produces=("return_id",), phrase="refund {amount} on {return_id}", examples={"amount": [5.0, 12.5, 20.0, 35.0]},
      bounds={"amount": (0.01, 1e9)})
def issue_refund(db: Db, return_id: str, amount: float) -> dict:
    """Refund money on an open return (requested or approved) and mark it refunded.

    Args:
        return_id: The return id.
        amount: The amount to refund, greater than zero.
    """
    ret = db.get("returns", return_id, "Return")
    if ret["status"] not in ("requested", "approved"):
        raise ToolError(f"Return {return_id} is {ret['status']}; only requested or approved returns can be refunded.")
    if amount <= 0:
        raise ToolError(f"The amount must be greater than zero, got {amount}.")
    item = db.get("order_items", ret["item_id"], "Item")
    paid = round(item["quantity"] * item["unit_price"], 2)
    refunded = db.value("SELECT COALESCE(SUM(refund_amount), 0) FROM returns WHERE item_id = ? AND status = 'refunded'", (ret["item_id"],))
    left = round(paid - refunded, 2)
    if amount > left + 1e-9:
        raise ToolError(f"Refund of {amount:.2f} exceeds the {left:.2f} still refundable for item {ret['item_id']} (paid {paid:.2f}).")
    db.update("returns", return_id, status="refunded", refund_amount=round(amount, 2))
    return {"return_id": return_id, "status": "refunded", "refund_amount": round(amount, 2), "still_refundable": round(left - amount, 2)}


THEME = Theme(SPEC, [find_customer_by_email, get_customer, list_orders, get_order, search_products, get_product, get_return,
                     place_order, cancel_order, request_return, issue_refund])
