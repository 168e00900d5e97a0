"""Mapping a source (its labels, name, description, tool names) onto the 20/50 taxonomy."""

from __future__ import annotations

import re

# L2 code -> keywords (matched as whole words or word prefixes in the source's text)
KEYWORDS: dict[str, str] = {
    "L2-01": "search web google bing duckduckgo serp brave tavily exa perplexity",
    "L2-02": "scrape scraper crawl crawler extract extraction html markdown firecrawl fetch readability",
    "L2-03": "api gateway openapi swagger graphql rest endpoint webhook zapier integration proxy rapidapi",
    "L2-04": "paper papers arxiv pubmed literature scholar academic journal preprint semantic",
    "L2-05": "citation citations bibliography orcid scholarly h-index zotero reference",
    "L2-06": "twitter social reddit mastodon bluesky linkedin facebook instagram discord community forum",
    "L2-07": "youtube video tiktok twitch podcast channel stream vimeo",
    "L2-08": "stock stocks equity ticker nasdaq earnings shares sec filing yahoo alpha",
    "L2-09": "currency forex exchange rate fx convert conversion",
    "L2-10": "finance financial portfolio budget expense invoice accounting bank payment stripe tax loan",
    "L2-11": "crypto coin coingecko coinmarketcap bitcoin token price market",
    "L2-12": "defi dex swap uniswap liquidity yield lending aave pool",
    "L2-13": "blockchain wallet ethereum solana web3 nft onchain chain evm transaction",
    "L2-14": "weather forecast temperature climate meteo rain",
    "L2-15": "map maps location geocode geocoding place places route directions address gps osm",
    "L2-16": "earthquake environment environmental air pollution satellite nasa ocean earth emission",
    "L2-17": "code python execute execution sandbox lint analysis compiler notebook jupyter interpreter",
    "L2-18": "package npm pypi dependency dependencies registry cargo maven version library",
    "L2-19": "framework component components react vue ui-kit docs documentation sdk plugin",
    "L2-20": "shell terminal command filesystem file files directory process bash os desktop",
    "L2-21": "cloud aws azure gcp kubernetes docker s3 vercel cloudflare server",
    "L2-22": "devops ci cd github gitlab git jenkins deploy deployment workflow pipeline automation jira",
    "L2-23": "browser playwright puppeteer selenium chrome tab click navigate",
    "L2-24": "test testing qa quality bug accessibility regression",
    "L2-25": "sql database postgres mysql sqlite query table relational supabase",
    "L2-26": "nosql mongodb redis document dynamodb firestore elasticsearch vector key-value",
    "L2-27": "memory knowledge note notes notion obsidian graph wiki remember",
    "L2-28": "llm model openai anthropic huggingface gpt claude gemini prompt inference embedding",
    "L2-29": "image images generate generation dall stable diffusion midjourney art photo",
    "L2-30": "agent agents orchestration multi-agent crew task tasks delegate",
    "L2-31": "thinking planning plan sequential reasoning goal strategy think",
    "L2-32": "decision argument debate judge evaluate pros cons vote",
    "L2-33": "calculator math arithmetic calculate calculation unit convert",
    "L2-34": "scientific symbolic equation physics matrix statistics wolfram simulation",
    "L2-35": "audio video ffmpeg transcode speech music sound subtitle",
    "L2-36": "game games gaming chess steam minecraft player pokemon",
    "L2-37": "museum art culture artwork gallery history heritage book books",
    "L2-38": "health medical clinical clinic patient doctor drug fitness medicine fda vet veterinary veterinarian pet pets vaccination",
    "L2-39": "chemistry biology protein gene genome molecule bioinformatics compound",
    "L2-40": "hotel booking airbnb flight flights travel reservation restaurant ticket",
    "L2-41": "transit train bus vehicle car traffic transport navigation parking",
    "L2-42": "document documents pdf word excel spreadsheet docx office text markdown",
    "L2-43": "design figma chart diagram visualization svg canvas color",
    "L2-44": "news rss feed headline headlines article articles",
    "L2-45": "trend trends trending analytics monitor monitoring seo keyword",
    "L2-46": "security pentest vulnerability exploit cve nmap scan hacking",
    "L2-47": "network threat intel ip dns firewall malware whois",
    "L2-48": "email slack message messaging sms notification telegram whatsapp chat send",
    "L2-49": "calendar time timezone schedule meeting date clock reminder",
    "L2-50": "education learn dictionary recipe weather quotes reference lifestyle course language translate",
}

# Source category labels (Toucan primary labels, TensorBlock categories) -> a default L2
LABEL_PRIORS: dict[str, str] = {
    "web search & research": "L2-01", "search": "L2-01", "browser automation": "L2-23", "database operations": "L2-25",
    "databases": "L2-25", "api integration": "L2-03", "content creation": "L2-42", "data analysis & processing": "L2-45",
    "cryptocurrency & blockchain": "L2-13", "finance": "L2-10", "financial services": "L2-10", "daily productivity": "L2-49",
    "ai/ml tools": "L2-28", "weather": "L2-14", "communication tools": "L2-48", "communication": "L2-48", "operating system": "L2-20",
    "memory management": "L2-27", "security & authentication": "L2-47", "security": "L2-47", "file management": "L2-20",
    "file systems": "L2-20", "travel & maps": "L2-15", "location services": "L2-15", "social media": "L2-06", "education": "L2-50",
    "gaming": "L2-36", "cloud services": "L2-21", "cloud platforms": "L2-21", "news & media": "L2-44", "time & calendar": "L2-49",
    "project management": "L2-22", "e-commerce": "L2-10", "health & fitness": "L2-38", "development tools": "L2-17",
    "developer tools": "L2-17", "version control": "L2-22", "command line": "L2-20", "data science tools": "L2-34",
    "knowledge & memory": "L2-27", "art & culture": "L2-37", "marketing": "L2-45", "monitoring": "L2-45", "multimedia": "L2-35",
    "research & data": "L2-04", "sports": "L2-36", "travel & transportation": "L2-40", "biology & medicine": "L2-39",
    "customer data platforms": "L2-25", "embedded systems": "L2-20", "other tools and integrations": "L2-03", "others": "L2-03",
    "aggregators": "L2-03", "coding agents": "L2-30", "workplace & productivity": "L2-42", "text-to-speech": "L2-35",
    "games & gamification": "L2-36", "legal": "L2-50", "home automation": "L2-41", "translation services": "L2-50",
}

_WORD = re.compile(r"[a-z0-9][a-z0-9\-]*")
_INDEX: dict[str, list[str]] = {}
for _code, _words in KEYWORDS.items():
    for _w in _words.split():
        _INDEX.setdefault(_w, []).append(_code)


def map_to_taxonomy(name: str, labels=(), description: str = "", tool_names=()) -> tuple[str, float]:
    """(L2 code, confidence in 0-1) for a source; keyword votes, with the source's own label as a prior."""
    text = " ".join([name, *labels, description, *(n.replace("_", " ") for n in tool_names)]).lower()
    votes: dict[str, float] = {}
    for w in _WORD.findall(text):
        for code in _INDEX.get(w, ()):
            votes[code] = votes.get(code, 0) + 1.0
    for i, label in enumerate(labels):
        code = LABEL_PRIORS.get(str(label).lower())
        if code:
            votes[code] = votes.get(code, 0) + (2.5 if i == 0 else 1.0)
    for w in _WORD.findall(name.lower()):  # the name speaks loudest
        for code in _INDEX.get(w, ()):
            votes[code] += 1.5
    if not votes:
        return "L2-03", 0.0
    code = max(sorted(votes), key=lambda c: votes[c])
    return code, round(votes[code] / sum(votes.values()), 3)
