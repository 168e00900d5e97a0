"""websearch: a web search engine's console: sites, indexed pages, the search log, crawl jobs, a blocklist."""

from __future__ import annotations

from typing import Literal

from agentworld_gym.theme import Theme
from agentworld_gym.tools import WRITE, Db, ToolError, tool
from agentworld_gym.world import Column, Table, ThemeSpec, choice_col, date_col, faker_col, fk_col, id_col, int_col, money_col

TOPICS = ["climate", "football", "recipes", "python", "travel", "elections", "astronomy", "fitness", "gardening", "investing"]
LANGUAGES = ["english", "german", "french", "spanish"]
PARTIAL_ROBOTS_MAX = 50  # pages per crawl job on a site whose robots rules are "partial"
CRAWL_STATES = ("queued", "running", "completed")  # jobs that count against the daily quota

SPEC = ThemeSpec(
    id="websearch",
    title="Lumen Search Console",
    category="Search & Information Retrieval",
    subcategory="General Web Search",
    label="web search engine",
    description="You help the search team inspect the index, the search log and the crawler, and keep bad sites out.",
    tables=(
        Table("sites", (
            id_col("site_id", "ST-"), faker_col("domain", "domain_name", unique=True), faker_col("owner", "company"),
            choice_col("category", ["news", "shop", "blog", "forum", "docs", "government"]),
            choice_col("robots_policy", ["allow", "partial", "disallow"], [0.55, 0.3, 0.15]),
            int_col("daily_crawl_quota", 40, 400), choice_col("status", ["active", "paused"], [0.85, 0.15]),
        ), rows=40),
        Table("pages", (
            id_col("page_id", "PG-", 5001), fk_col("site_id", "sites"), faker_col("title", "catch_phrase"),
            choice_col("topic", TOPICS), choice_col("language", LANGUAGES, [0.6, 0.15, 0.15, 0.1]),
            int_col("word_count", 120, 6_000), money_col("rank_score", 1, 100),
            date_col("last_crawled", "2024-06-01", "2025-05-31"),
            choice_col("status", ["indexed", "stale", "removed"], [0.75, 0.2, 0.05]),
        ), rows=250),
        Table("searches", (
            id_col("search_id", "SQ-", 7001), choice_col("query", TOPICS), choice_col("region", ["us", "eu", "apac", "latam"]),
            int_col("result_count", 0, 5_000), Column("clicked_page_id", "fk", "pages", nullable_share=0.3),
            date_col("date", "2025-05-01", "2025-05-31"),
        ), rows=150),
        Table("crawl_jobs", (
            id_col("crawl_job_id", "CJ-", 2001), fk_col("site_id", "sites"), int_col("pages_requested", 5, 80),
            choice_col("status", ["queued", "running", "completed", "failed", "cancelled"], [0.15, 0.1, 0.6, 0.1, 0.05]),
            date_col("created_date", "2025-05-25", "2025-06-01"),
        ), rows=60),
        Table("blocklist", (
            id_col("block_id", "BL-", 9001), fk_col("site_id", "sites"),
            choice_col("reason", ["spam", "malware", "phishing", "legal request"]), date_col("added_date", "2024-01-01", "2025-05-31"),
        ), rows=5),
    ),
    rules=(
        "Sites on the blocklist are never crawled, and their pages never appear in search results.",
        "Paused sites and sites whose robots rules say 'disallow' cannot be crawled.",
        f"On a site whose robots rules are 'partial', one crawl job may request at most {PARTIAL_ROBOTS_MAX} pages.",
        "The pages requested by one site's crawl jobs created on the same day (queued, running or completed) may not exceed its daily crawl quota.",
        "Only queued or running crawl jobs can be cancelled.",
        "A removed page cannot be recrawled; recrawling a page uses one page of its site's daily quota.",
    ),
)


def _is_blocked(db: Db, site_id: str) -> bool:
    return db.value("SELECT COUNT(*) FROM blocklist WHERE site_id = ?", (site_id,)) > 0


def _check_crawlable(db: Db, site_id: str, pages: int) -> dict:
    """The site row, when a crawl of `pages` pages is allowed today; else a ToolError saying why."""
    site = db.get("sites", site_id, "Site")
    if _is_blocked(db, site_id):
        raise ToolError(f"Site {site_id} is on the blocklist; it cannot be crawled.")
    if site["status"] != "active":
        raise ToolError(f"Site {site_id} is {site['status']}; only active sites can be crawled.")
    if site["robots_policy"] == "disallow":
        raise ToolError(f"The robots rules of site {site_id} disallow crawling.")
    if site["robots_policy"] == "partial" and pages > PARTIAL_ROBOTS_MAX:
        raise ToolError(f"The robots rules of site {site_id} allow at most {PARTIAL_ROBOTS_MAX} pages per crawl, got {pages}.")
    used = _used_today(db, site_id)
    if used + pages > site["daily_crawl_quota"]:
        raise ToolError(f"Daily crawl quota of site {site_id} exceeded: {used} of {site['daily_crawl_quota']} pages already requested today, "
                        f"{pages} more asked.")
    return site


def _used_today(db: Db, site_id: str) -> int:
    marks = ", ".join("?" for _ in CRAWL_STATES)
    return int(db.value(f"SELECT COALESCE(SUM(pages_requested), 0) FROM crawl_jobs WHERE site_id = ? AND created_date = ? AND status IN ({marks})",
                        (site_id, db.now[:10], *CRAWL_STATES)))


@tool(produces=("site_id",), phrase="look up {site_id}")
def get_site(db: Db, site_id: str) -> dict:
    """Get a site's domain, owner, robots rules, daily crawl quota, status and whether it is blocklisted.

    Args:
        site_id: The site id, e.g. "ST-1001".
    """
    site = db.get("sites", site_id, "Site")
    site["blocklist_status"] = "blocked" if _is_blocked(db, site_id) else "not blocked"
    site["pages_crawled_today"] = _used_today(db, site_id)
    site["indexed_pages"] = db.value("SELECT COUNT(*) FROM pages WHERE site_id = ? AND status = 'indexed'", (site_id,))
    return site


@tool(produces=("site_id",), phrase="find the site with the domain {domain}")
def find_site_by_domain(db: Db, domain: str) -> dict:
    """Find a site by its domain name.

    Args:
        domain: The domain, e.g. "example.com".
    """
    row = db.one("SELECT * FROM sites WHERE lower(domain) = lower(?) ORDER BY site_id LIMIT 1", (domain.strip(),))
    if row is None:
        raise ToolError(f"No site with domain {domain!r}.")
    return row


@tool(produces=("page_id", "site_id"), phrase="search the index for {language} pages about {query}", examples={"query": TOPICS})
def search_pages(db: Db, query: str, language: Literal["english", "german", "french", "spanish"]) -> list:
    """Search the index: pages about a topic (or whose title contains the words) in one language, best ranked first.

    Pages of blocklisted sites and removed pages are never returned.

    Args:
        query: The topic or words to search for, e.g. "climate".
        language: The page language.
    """
    q = query.strip().lower()
    if not q:
        raise ToolError("The query must not be empty.")
    return db.all(
        "SELECT page_id, site_id, title, topic, rank_score FROM pages WHERE (lower(topic) = ? OR lower(title) LIKE ?) "
        "AND language = ? AND status != 'removed' AND site_id NOT IN (SELECT site_id FROM blocklist) "
        "ORDER BY rank_score DESC, page_id",
        (q, f"%{q}%", language),
    )


@tool(produces=("page_id", "site_id"), phrase="list the {status} pages of {site_id}")
def list_site_pages(db: Db, site_id: str, status: Literal["indexed", "stale", "removed"] | None = None) -> list:
    """List a site's pages, best ranked first, optionally only those with a given status.

    Args:
        site_id: The site id.
        status: Only pages with this status.
    """
    db.get("sites", site_id, "Site")
    sql, params = "SELECT page_id, site_id, title, status, rank_score FROM pages WHERE site_id = ?", [site_id]
    if status:
        sql, params = sql + " AND status = ?", params + [status]
    return db.all(sql + " ORDER BY rank_score DESC, page_id", params)


@tool(produces=("page_id", "site_id"), phrase="look up {page_id}")
def get_page(db: Db, page_id: str) -> dict:
    """Get a page's title, topic, language, word count, rank score, last crawl date and status.

    Args:
        page_id: The page id, e.g. "PG-5001".
    """
    return db.get("pages", page_id, "Page")


@tool(produces=("page_id",), phrase="summarise how people searched for {query} last month", examples={"query": TOPICS})
def search_stats(db: Db, query: str) -> dict:
    """Search-log statistics for one query: how often it was searched, clicked, and the most clicked page.

    Args:
        query: The query text, e.g. "climate".
    """
    q = query.strip().lower()
    row = db.one("SELECT COUNT(*) AS searches, COUNT(clicked_page_id) AS clicks, ROUND(COALESCE(AVG(result_count), 0), 1) AS average_results "
                 "FROM searches WHERE lower(query) = ?", (q,))
    if not row["searches"]:
        raise ToolError(f"Nobody searched for {query!r}.")
    top = db.one("SELECT clicked_page_id, COUNT(*) AS n FROM searches WHERE lower(query) = ? AND clicked_page_id IS NOT NULL "
                 "GROUP BY clicked_page_id ORDER BY n DESC, clicked_page_id LIMIT 1", (q,))
    region = db.value("SELECT region FROM searches WHERE lower(query) = ? GROUP BY region ORDER BY COUNT(*) DESC, region LIMIT 1", (q,))
    return {"query": q, **row, "click_rate": round(row["clicks"] / row["searches"], 3), "top_region": region,
            "top_clicked_page_id": top["clicked_page_id"] if top else None}


@tool(produces=("crawl_job_id", "site_id"), phrase="list the crawl jobs of {site_id}")
def list_crawl_jobs(db: Db, site_id: str) -> list:
    """List a site's crawl jobs, newest first.

    Args:
        site_id: The site id.
    """
    db.get("sites", site_id, "Site")
    return db.all("SELECT * FROM crawl_jobs WHERE site_id = ? ORDER BY created_date DESC, crawl_job_id DESC", (site_id,))


@tool(produces=("crawl_job_id", "site_id"), phrase="look up {crawl_job_id}")
def get_crawl_job(db: Db, crawl_job_id: str) -> dict:
    """Get one crawl job.

    Args:
        crawl_job_id: The crawl job id, e.g. "CJ-2001".
    """
    return db.get("crawl_jobs", crawl_job_id, "Crawl job")


@tool(mode=WRITE, produces=("crawl_job_id", "site_id"), phrase="start a crawl of {pages} pages on {site_id}",
      examples={"pages": [10, 20, 30, 45, 60, 120]})
def start_crawl(db: Db, site_id: str, pages: int) -> dict:
    """Queue a crawl job for a site, within its robots rules and daily crawl quota.

    Args:
        site_id: The site id.
        pages: How many pages to crawl, at least 1.
    """
    if pages < 1:
        raise ToolError(f"A crawl must request at least 1 page, got {pages}.")
    site = _check_crawlable(db, site_id, pages)
    crawl_job_id = db.next_id("crawl_jobs", "CJ-", 2001)
    db.insert("crawl_jobs", {"crawl_job_id": crawl_job_id, "site_id": site_id, "pages_requested": pages, "status": "queued", "created_date": db.now[:10]})
    return {"crawl_job_id": crawl_job_id, "site_id": site_id, "status": "queued",
            "quota_left_today": site["daily_crawl_quota"] - _used_today(db, site_id)}


@tool(mode=WRITE, produces=("crawl_job_id",), phrase="cancel {crawl_job_id}")
def cancel_crawl(db: Db, crawl_job_id: str) -> dict:
    """Cancel a queued or running crawl job.

    Args:
        crawl_job_id: The crawl job id.
    """
    job = db.get("crawl_jobs", crawl_job_id, "Crawl job")
    if job["status"] not in ("queued", "running"):
        raise ToolError(f"Crawl job {crawl_job_id} is {job['status']}; only queued or running jobs can be cancelled.")
    db.update("crawl_jobs", crawl_job_id, status="cancelled")
    return {"crawl_job_id": crawl_job_id, "status": "cancelled", "pages_released": job["pages_requested"]}


@tool(mode=WRITE, produces=("page_id", "crawl_job_id"), phrase="recrawl {page_id} now")
def recrawl_page(db: Db, page_id: str) -> dict:
    """Recrawl one page immediately; it counts as a one-page crawl job of its site.

    Args:
        page_id: The page id.
    """
    page = db.get("pages", page_id, "Page")
    if page["status"] == "removed":
        raise ToolError(f"Page {page_id} was removed from the index; it cannot be recrawled.")
    _check_crawlable(db, page["site_id"], 1)
    crawl_job_id = db.next_id("crawl_jobs", "CJ-", 2001)
    db.insert("crawl_jobs", {"crawl_job_id": crawl_job_id, "site_id": page["site_id"], "pages_requested": 1, "status": "completed", "created_date": db.now[:10]})
    db.update("pages", page_id, status="indexed", last_crawled=db.now[:10])
    return {"page_id": page_id, "crawl_job_id": crawl_job_id, "status": "indexed", "last_crawled": db.now[:10]}


@tool(mode=WRITE, produces=("site_id", "block_id"), phrase="add {site_id} to the blocklist for {reason}")
def block_site(db: Db, site_id: str, reason: Literal["spam", "malware", "phishing", "legal request"]) -> dict:
    """Put a site on the blocklist; its queued and running crawl jobs are cancelled.

    Args:
        site_id: The site id.
        reason: Why the site is blocked.
    """
    db.get("sites", site_id, "Site")
    if _is_blocked(db, site_id):
        raise ToolError(f"Site {site_id} is already on the blocklist.")
    block_id = db.next_id("blocklist", "BL-", 9001)
    db.insert("blocklist", {"block_id": block_id, "site_id": site_id, "reason": reason, "added_date": db.now[:10]})
    cancelled = db.execute("UPDATE crawl_jobs SET status = 'cancelled' WHERE site_id = ? AND status IN ('queued', 'running')", (site_id,))
    return {"site_id": site_id, "block_id": block_id, "reason": reason, "cancelled_crawls": cancelled}


@tool(mode=WRITE, produces=("site_id",), phrase="take {site_id} off the blocklist")
def unblock_site(db: Db, site_id: str) -> dict:
    """Remove a site from the blocklist.

    Args:
        site_id: The site id.
    """
    db.get("sites", site_id, "Site")
    if not _is_blocked(db, site_id):
        raise ToolError(f"Site {site_id} is not on the blocklist.")
    db.execute("DELETE FROM blocklist WHERE site_id = ?", (site_id,))
    return {"site_id": site_id, "blocklist_status": "not blocked"}


@tool(mode=WRITE, produces=("page_id",), phrase="remove {page_id} from the index")
def remove_page(db: Db, page_id: str) -> dict:
    """Remove a page from the index (it stops appearing in search results).

    Args:
        page_id: The page id.
    """
    page = db.get("pages", page_id, "Page")
    if page["status"] == "removed":
        raise ToolError(f"Page {page_id} is already removed.")
    db.update("pages", page_id, status="removed")
    return {"page_id": page_id, "status": "removed", "previous_status": page["status"]}


THEME = Theme(SPEC, [get_site, find_site_by_domain, search_pages, list_site_pages, get_page, search_stats, list_crawl_jobs,
                     get_crawl_job, start_crawl, cancel_crawl, recrawl_page, block_site, unblock_site, remove_page])
