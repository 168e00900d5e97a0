"""news: a news reader app's sources, articles, readers, source subscriptions and bookmarks."""

from __future__ import annotations

from datetime import date, timedelta
from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col

TOPICS = ("politics", "technology", "business", "science", "sports", "health", "climate", "culture")
OUTLETS = ("The Morning Ledger", "Harbor Gazette", "Daily Meridian", "Northern Courier", "Tech Pulse", "Civic Herald",
           "Coastline News", "The Evening Post", "Global Wire", "Metro Dispatch", "Science Today", "Market Watchtower",
           "The Sports Desk", "Valley Tribune", "Capital Report", "Green Planet News", "Health Beat", "Culture Review",
           "Frontier Times", "Summit Chronicle")
FREE_SOURCES = 5
FREE_BOOKMARKS = 10

SPEC = ThemeSpec(
    id="news",
    title="Newsstream",
    category="News & Trends",
    subcategory="News Aggregation & Feeds",
    label="news reader with feeds and bookmarks",
    description="You help readers of a news app follow sources, read their feed, bookmark articles and see what is trending.",
    tables=(
        Table("sources", (
            id_col("source_id", "SR-", 101), Column("name", "faker", ("random_element", OUTLETS), unique=True),
            choice_col("country", ["US", "UK", "CA", "AU", "IN"], [0.45, 0.2, 0.12, 0.11, 0.12]),
            choice_col("reliability", ["high", "medium", "low"], [0.5, 0.35, 0.15]),
            choice_col("status", ["active", "suspended"], [0.85, 0.15]),
        ), rows=len(OUTLETS)),
        Table("articles", (
            id_col("article_id", "AR-", 5001), fk_col("source_id", "sources"), Column("title", "faker", ("sentence", 8)),
            choice_col("topic", TOPICS), faker_col("author", "name"), date_col("published", "2025-05-01", "2025-05-31"),
            int_col("reads", 0, 50_000), choice_col("status", ["published", "retracted"], [0.95, 0.05]),
        ), rows=250),
        Table("readers", (
            id_col("reader_id", "RD-"), faker_col("name", "name"), faker_col("email", "email", unique=True),
            choice_col("plan", ["free", "premium"], [0.7, 0.3]), date_col("joined", "2022-01-01", "2025-05-15"),
        ), rows=40),
        Table("subscriptions", (
            id_col("subscription_id", "SU-", 301), fk_col("reader_id", "readers"), fk_col("source_id", "sources"),
            date_col("since", "2023-01-01", "2025-05-31"), choice_col("status", ["active", "cancelled"], [0.85, 0.15]),
        ), rows=70),
        Table("bookmarks", (
            id_col("bookmark_id", "BM-", 7001), fk_col("reader_id", "readers"), fk_col("article_id", "articles"),
            date_col("created", "2025-05-01", "2025-05-31"),
        ), rows=90),
    ),
    rules=(
        f"Free readers may follow at most {FREE_SOURCES} sources and keep at most {FREE_BOOKMARKS} bookmarks; premium readers have no limits.",
        "Suspended sources take no new followers, and nobody follows the same source twice.",
        "Only published articles can be bookmarked (retracted ones cannot), and each article only once per reader.",
        "Moving to the free plan is allowed only when the reader is within the free limits.",
    ),
)


def _following(db: Db, reader_id: str) -> int:
    return db.value("SELECT COUNT(DISTINCT source_id) FROM subscriptions WHERE reader_id = ? AND status = 'active'", (reader_id,))


def _bookmarks(db: Db, reader_id: str) -> int:
    return db.value("SELECT COUNT(*) FROM bookmarks WHERE reader_id = ?", (reader_id,))


@tool(produces=("reader_id",), phrase="find the reader whose email is {email}")
def find_reader_by_email(db: Db, email: str) -> dict:
    """Find a reader by email address.

    Args:
        email: The reader's email address.
    """
    row = db.one("SELECT * FROM readers WHERE lower(email) = lower(?)", (email.strip(),))
    if row is None:
        raise ToolError(f"No reader with email {email!r}.")
    return row


@tool(produces=("reader_id",), phrase="look up the account of {reader_id}")
def get_reader(db: Db, reader_id: str) -> dict:
    """Get a reader's plan with how many sources they follow and how many bookmarks they keep.

    Args:
        reader_id: The reader id, e.g. "RD-1001".
    """
    reader = db.get("readers", reader_id, "Reader")
    return {**reader, "sources_followed": _following(db, reader_id), "bookmark_count": _bookmarks(db, reader_id)}


@tool(produces=("article_id", "source_id"), phrase="show the {topic} news feed of {reader_id}")
def get_feed(db: Db, reader_id: str, topic: Literal[TOPICS] | None = None) -> list:
    """The published articles of the sources a reader follows, newest first.

    Args:
        reader_id: The reader id.
        topic: Only articles on this topic.
    """
    db.get("readers", reader_id, "Reader")
    sql = ("SELECT a.article_id, a.source_id, s.name AS source_name, a.title, a.topic, a.published, a.reads FROM articles a "
           "JOIN sources s ON s.source_id = a.source_id WHERE a.status = 'published' AND a.source_id IN "
           "(SELECT source_id FROM subscriptions WHERE reader_id = ? AND status = 'active')")
    params = [reader_id]
    if topic:
        sql, params = sql + " AND a.topic = ?", params + [topic]
    return db.all(sql + " ORDER BY a.published DESC, a.article_id DESC", params)


@tool(produces=("article_id", "source_id"), phrase="find the published {topic} articles")
def search_articles(db: Db, topic: Literal[TOPICS], min_reads: int | None = None) -> list:
    """Published articles on a topic from every source, newest first.

    Args:
        topic: The topic.
        min_reads: Only articles read at least this many times.
    """
    return db.all("SELECT * FROM articles WHERE topic = ? AND status = 'published' AND reads >= ? ORDER BY published DESC, article_id DESC",
                  (topic, min_reads or 0))


@tool(produces=("article_id", "source_id"), phrase="look up {article_id}")
def get_article(db: Db, article_id: str) -> dict:
    """Get an article with its source's name and how many readers bookmarked it.

    Args:
        article_id: The article id, e.g. "AR-5001".
    """
    article = db.get("articles", article_id, "Article")
    source = db.get("sources", article["source_id"])
    saved = db.value("SELECT COUNT(*) FROM bookmarks WHERE article_id = ?", (article_id,))
    return {**article, "source_name": source["name"], "bookmarked_by": saved}


@tool(produces=("source_id",), phrase="look up {source_id}")
def get_source(db: Db, source_id: str) -> dict:
    """Get a news source with its number of articles and active followers.

    Args:
        source_id: The source id, e.g. "SR-101".
    """
    source = db.get("sources", source_id, "Source")
    articles = db.value("SELECT COUNT(*) FROM articles WHERE source_id = ? AND status = 'published'", (source_id,))
    followers = db.value("SELECT COUNT(DISTINCT reader_id) FROM subscriptions WHERE source_id = ? AND status = 'active'", (source_id,))
    return {**source, "published_articles": articles, "followers": followers}


@tool(produces=("article_id", "source_id"), phrase="list the {topic} articles of {source_id}")
def list_source_articles(db: Db, source_id: str, topic: Literal[TOPICS] | None = None) -> list:
    """List a source's published articles, newest first.

    Args:
        source_id: The source id.
        topic: Only articles on this topic.
    """
    db.get("sources", source_id, "Source")
    sql, params = "SELECT * FROM articles WHERE source_id = ? AND status = 'published'", [source_id]
    if topic:
        sql, params = sql + " AND topic = ?", params + [topic]
    return db.all(sql + " ORDER BY published DESC, article_id DESC", params)


@tool(produces=("article_id",), phrase="rank the trending topics of the last {days} days", examples={"days": [3, 7, 14, 30]})
def trending_topics(db: Db, days: int) -> list:
    """Topics ranked by total reads of articles published in the last `days` days, with each topic's most-read article.

    Args:
        days: How many days back to look, 1 to 90.
    """
    if not 1 <= days <= 90:
        raise ToolError(f"days must be between 1 and 90, got {days}.")
    since = (date.fromisoformat(db.now[:10]) - timedelta(days=days)).isoformat()
    return db.all(
        "WITH recent AS (SELECT *, ROW_NUMBER() OVER (PARTITION BY topic ORDER BY reads DESC, article_id) AS rank "
        "FROM articles WHERE status = 'published' AND published >= ?) "
        "SELECT topic, COUNT(*) AS articles, SUM(reads) AS total_reads, MAX(CASE WHEN rank = 1 THEN article_id END) AS top_article_id "
        "FROM recent GROUP BY topic ORDER BY total_reads DESC, topic", (since,))


@tool(produces=("bookmark_id", "article_id"), phrase="list the bookmarks of {reader_id}")
def list_bookmarks(db: Db, reader_id: str) -> list:
    """List a reader's bookmarked articles, newest bookmark first.

    Args:
        reader_id: The reader id.
    """
    db.get("readers", reader_id, "Reader")
    return db.all("SELECT b.bookmark_id, b.article_id, a.title, a.topic, b.created FROM bookmarks b JOIN articles a ON a.article_id = b.article_id "
                  "WHERE b.reader_id = ? ORDER BY b.created DESC, b.bookmark_id DESC", (reader_id,))


@tool(mode=WRITE, produces=("subscription_id", "reader_id", "source_id"), phrase="make {reader_id} follow {source_id}")
def follow_source(db: Db, reader_id: str, source_id: str) -> dict:
    """Make a reader follow a source (within the free plan's limit).

    Args:
        reader_id: The reader id.
        source_id: The source id.
    """
    reader = db.get("readers", reader_id, "Reader")
    source = db.get("sources", source_id, "Source")
    if source["status"] != "active":
        raise ToolError(f"Source {source_id} is {source['status']} and takes no new followers.")
    if db.value("SELECT COUNT(*) FROM subscriptions WHERE reader_id = ? AND source_id = ? AND status = 'active'", (reader_id, source_id)):
        raise ToolError(f"Reader {reader_id} already follows source {source_id}.")
    count = _following(db, reader_id)
    if reader["plan"] == "free" and count >= FREE_SOURCES:
        raise ToolError(f"Reader {reader_id} is on the free plan and already follows {count} sources (limit {FREE_SOURCES}).")
    subscription_id = db.next_id("subscriptions", "SU-", 301)
    db.insert("subscriptions", {"subscription_id": subscription_id, "reader_id": reader_id, "source_id": source_id,
                                "since": db.now[:10], "status": "active"})
    return {"subscription_id": subscription_id, "reader_id": reader_id, "source_id": source_id, "source_name": source["name"],
            "sources_followed": count + 1}


@tool(mode=WRITE, produces=("reader_id", "source_id"), phrase="make {reader_id} stop following {source_id}")
def unfollow_source(db: Db, reader_id: str, source_id: str) -> dict:
    """Stop a reader following a source.

    Args:
        reader_id: The reader id.
        source_id: The source id.
    """
    db.get("readers", reader_id, "Reader")
    db.get("sources", source_id, "Source")
    n = db.execute("UPDATE subscriptions SET status = 'cancelled' WHERE reader_id = ? AND source_id = ? AND status = 'active'",
                   (reader_id, source_id))
    if not n:
        raise ToolError(f"Reader {reader_id} does not follow source {source_id}.")
    return {"reader_id": reader_id, "source_id": source_id, "status": "cancelled", "sources_followed": _following(db, reader_id)}


@tool(mode=WRITE, produces=("bookmark_id", "article_id"), phrase="bookmark {article_id} for {reader_id}")
def bookmark_article(db: Db, reader_id: str, article_id: str) -> dict:
    """Bookmark a published article for a reader (within the free plan's limit).

    Args:
        reader_id: The reader id.
        article_id: The article id.
    """
    reader = db.get("readers", reader_id, "Reader")
    article = db.get("articles", article_id, "Article")
    if article["status"] != "published":
        raise ToolError(f"Article {article_id} is {article['status']} and cannot be bookmarked.")
    if db.value("SELECT COUNT(*) FROM bookmarks WHERE reader_id = ? AND article_id = ?", (reader_id, article_id)):
        raise ToolError(f"Reader {reader_id} already bookmarked article {article_id}.")
    count = _bookmarks(db, reader_id)
    if reader["plan"] == "free" and count >= FREE_BOOKMARKS:
        raise ToolError(f"Reader {reader_id} is on the free plan and already keeps {count} bookmarks (limit {FREE_BOOKMARKS}).")
    bookmark_id = db.next_id("bookmarks", "BM-", 7001)
    db.insert("bookmarks", {"bookmark_id": bookmark_id, "reader_id": reader_id, "article_id": article_id, "created": db.now[:10]})
    return {"bookmark_id": bookmark_id, "article_id": article_id, "bookmark_count": count + 1}


@tool(mode=WRITE, produces=("article_id",), phrase="remove {article_id} from the bookmarks of {reader_id}")
def remove_bookmark(db: Db, reader_id: str, article_id: str) -> dict:
    """Remove a reader's bookmark of an article.

    Args:
        reader_id: The reader id.
        article_id: The article id.
    """
    db.get("readers", reader_id, "Reader")
    n = db.execute("DELETE FROM bookmarks WHERE reader_id = ? AND article_id = ?", (reader_id, article_id))
    if not n:
        raise ToolError(f"Reader {reader_id} has no bookmark on article {article_id}.")
    return {"reader_id": reader_id, "article_id": article_id, "bookmark_count": _bookmarks(db, reader_id)}


@tool(mode=WRITE, produces=("reader_id",), phrase="move {reader_id} to the {plan} plan")
def change_plan(db: Db, reader_id: str, plan: Literal["free", "premium"]) -> dict:
    """Move a reader to the free or the premium plan.

    Args:
        reader_id: The reader id.
        plan: The new plan.
    """
    reader = db.get("readers", reader_id, "Reader")
    if reader["plan"] == plan:
        raise ToolError(f"Reader {reader_id} is already on the {plan} plan.")
    if plan == "free":
        follows, saved = _following(db, reader_id), _bookmarks(db, reader_id)
        if follows > FREE_SOURCES or saved > FREE_BOOKMARKS:
            raise ToolError(f"Reader {reader_id} follows {follows} sources and keeps {saved} bookmarks; the free plan allows "
                            f"{FREE_SOURCES} and {FREE_BOOKMARKS}. Unfollow or remove some first.")
    db.update("readers", reader_id, plan=plan)
    return {"reader_id": reader_id, "plan": plan, "previous_plan": reader["plan"]}


THEME = Theme(SPEC, [find_reader_by_email, get_reader, get_feed, search_articles, get_article, get_source, list_source_articles,
                     trending_topics, list_bookmarks, follow_source, unfollow_source, bookmark_article, remove_bookmark, change_plan])
