"""What a column means, and the rules a whole world keeps: semantic types inferred from a column's
name, its table and the descriptions discovery kept (`semantic_type`), values a real service would
hold for each type (`typed_values`), plausibility checks per type (`plausible`), and the constraints
across columns and tables (`enforce` while building, `violations` after).

The constraints are general rules over names and values, not lists of known column names:

- order: two dates (or two numbers) of a table whose names differ only in a start-like and an
  end-like word (start/end, begin/finish, from/to, min/max, opened/closed, check_in/check_out,
  valid_from/valid_until, created/expires ...) are a range: start <= end;
- lineage: a row's creation date is not before its parent's (the row its first foreign key names);
- status: a status value that names an event (shipped, refunded, cancelled ...) goes with the column
  that records that event (shipped_at, refund_amount ...): set exactly on the rows in that state;
- totals: a parent's total equals the sum of its line rows' amounts;
- counts: a parent's `<child>_count` equals the number of its child rows.
"""

from __future__ import annotations

import re
from datetime import date, datetime, timedelta
from functools import lru_cache

from .sql_names import sql_name

# ------------------------------------------------------------------------------------------ words


@lru_cache(maxsize=65536)
def tokens(name: str) -> tuple[str, ...]:
    """'checkInDate' -> ('check', 'in', 'date'); 'valid_until' -> ('valid', 'until')."""
    name = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", str(name))
    return tuple(w for w in re.split(r"[^a-z0-9]+", name.lower()) if w)


def singular(word: str) -> str:
    if word in ("species", "series", "news", "status", "analysis", "data", "media", "metadata"):
        return word
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith(("sses", "xes", "ches", "shes")):
        return word[:-2]
    if word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def stem(word: str) -> str:
    """A crude stem that joins a state and the column recording it: 'shipped'/'shipping'/'shipment' ->
    'ship', 'refunded'/'refund' -> 'refund', 'cancelled'/'cancellation' -> 'cancel', 'delivered'/'delivery' -> 'deliver'."""
    w = word.lower()
    for suf in ("lation", "ation", "ition", "ment", "ings", "ing", "ied", "ed", "ion", "ure", "al", "y", "es", "s", "e"):
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    if len(w) > 3 and w[-1] == w[-2] and w[-1] not in "aeiou":
        w = w[:-1]  # shipp -> ship, cancell -> cancel
    return {"pai": "pay", "paid": "pay", "sent": "send", "sold": "sell", "won": "win", "lost": "los", "began": "begin"}.get(w, w)


STOPWORDS = frozenset((
    "a", "an", "the", "of", "for", "and", "or", "to", "in", "on", "at", "by", "with", "from", "as", "is", "are", "was", "were", "be",
    "been", "being", "this", "that", "these", "those", "it", "its", "your", "our", "my", "their", "his", "her", "new", "all", "any",
    "each", "per", "via", "into", "about", "over", "under", "after", "before", "between", "up", "out", "off", "not", "no", "can",
    "could", "would", "should", "will", "shall", "may", "might", "must", "also", "such", "than", "then", "there", "here", "which",
    "what", "when", "where", "who", "whom", "whose", "how", "why", "you", "they", "them", "we", "us", "he", "she", "me", "do", "does",
    "did", "done", "has", "have", "had", "get", "gets", "got", "use", "uses", "used", "using", "one", "two", "more", "most", "other",
    "some", "only", "just", "very", "so", "if", "else", "both", "either",
    "without", "within", "through", "across", "against", "along", "among", "around", "behind", "below", "beyond", "during", "except",
    "inside", "near", "onto", "outside", "since", "toward", "towards", "upon", "while", "whether", "etc", "eg", "ie",
))


@lru_cache(maxsize=1)
def _filler() -> tuple[frozenset[str], frozenset[str]]:
    """Faker's English filler: the lorem word list, and the catch-phrase/bs buzzwords."""
    from faker.providers.company.en_US import Provider as Company
    from faker.providers.lorem.en_US import Provider as Lorem

    buzz = set()
    for group in (*Company.catch_phrase_words, *Company.bsWords):
        for phrase in group:
            buzz.update(tokens(phrase))
    return frozenset(set(Lorem.word_list) - STOPWORDS), frozenset(buzz - STOPWORDS)


def dictionary_words() -> frozenset[str]:
    lorem, buzz = _filler()
    return lorem | buzz


def content_words(text: str) -> list[str]:
    # whole words only: the letters inside a hash or an id ('0x3bad9') are no words
    return [w for w in re.findall(r"(?<![a-z0-9])[a-z]+(?![a-z0-9])", str(text).lower()) if len(w) > 2 and w not in STOPWORDS]


def is_lorem(value, vocabulary: frozenset[str] | set[str]) -> bool:
    """A text cell of filler: dictionary words out of context. Every content word comes from the lorem
    list (or, two or more, from the buzzword lists), and none of them is the theme's own. A Title Case
    name and an upper-case code are not prose: Faker's filler providers write neither."""
    if not isinstance(value, str):
        return False
    letters = [w for w in re.findall(r"[A-Za-z]+", value) if w not in STOPWORDS]
    if len(letters) >= 2 and all(w[0].isupper() for w in letters) or re.fullmatch(r"[A-Z]{2,5}", value.strip()):
        return False  # a name in title case ('Last Night', 'A Study of Dark Matter') or a code ('TOWN'), not prose
    if re.search(r"(?<![a-z0-9])[a-z]+[0-9][a-z0-9]*(?![a-z0-9])", value.lower()):
        return False  # a word of letters and digits ('k8s', 'smiles2svg', 'web3') is a name no filler list holds
    words = content_words(value)
    if not words:
        return False
    lorem, buzz = _filler()
    filler = all(w in lorem for w in words) or (len(words) > 1 and all(w in buzz for w in words))
    return filler and not any(w in vocabulary or singular(w) in vocabulary for w in words)


def theme_vocabulary(spec) -> frozenset[str]:
    """The theme's own words: its title, label, description, rules, table and column names, choice
    values and the tool/parameter descriptions discovery kept (spec.extra['notes'])."""
    parts = [spec.title, spec.label, spec.description, spec.category, spec.subcategory, *spec.rules]
    extra = spec.extra if isinstance(spec.extra, dict) else {}
    parts += [str(v) for v in (extra.get("notes") or {}).values()]
    parts += [str(extra.get("about", ""))]
    for t in spec.tables:
        parts.append(t.name.replace("_", " "))
        for c in t.columns:
            parts.append(c.name.replace("_", " "))
            if c.gen == "choice":
                parts += [str(v) for v in c.arg]
    out = set()
    for w in content_words(" ".join(parts)):
        out.add(w)
        out.add(singular(w))
    return frozenset(out)


_PLAIN = frozenset(("record", "records", "theme", "user", "users", "help", "look", "change", "changed", "summarise", "summarize", "service",
                    "tool", "tools", "status", "created", "updated", "description", "name", "names", "list", "lists", "search", "find", "get",
                    "add", "remove", "update", "delete", "return", "returns", "available", "specific", "relevant", "useful", "information",
                    "details", "detail", "data", "value", "values", "given", "optional", "default", "number", "string", "true", "false",
                    "whether", "result", "results", "item", "items", "type", "format", "allows", "provides", "based", "like", "want",
                    "need", "make", "show", "shows", "call", "works", "work", "take", "takes", "give", "gives", "able", "well", "many"))


def domain_words(spec) -> list[str]:
    """Words a theme's generated text is made of: the nouns and names of what it is about (its title,
    label, description, tables and kept descriptions), not its structure (column names, states) nor
    the verbs and adverbs its descriptions are written with."""
    extra = spec.extra if isinstance(spec.extra, dict) else {}
    parts = [spec.title, spec.label, spec.description, *(str(v) for v in (extra.get("notes") or {}).values()), str(extra.get("about", ""))]
    parts += [t.name.replace("_", " ") for t in spec.tables]
    structure = {w for t in spec.tables for c in t.columns for w in tokens(c.name)}
    structure |= {w for t in spec.tables for c in t.columns if c.gen == "choice" for v in c.arg for w in tokens(str(v))}
    words = {singular(w) for w in content_words(" ".join(parts))}
    keep = {w for w in words if len(w) >= 4 and w.isalpha() and w not in _PLAIN and w not in STOPWORDS and w not in structure
            and not w.endswith(("ly", "ing", "ed"))}  # 'others' is no domain word either
    # an acronym keeps its s (sms, dns, k8s: 'sm', 'dn' and 'k8' are no words)
    return sorted(keep | {singular(w) if len(singular(w)) >= 3 else w for t in spec.tables for w in tokens(t.name)
                          if len(w) >= 3 and w not in STOPWORDS and singular(w) not in STOPWORDS}) or ["record"]


# ------------------------------------------------------------------------------------------ semantic types

# A type per head word (the column name's last word that means something) ...
_HEAD = {
    **dict.fromkeys(("email", "mail", "emails"), "email"),
    **dict.fromkeys(("phone", "mobile", "tel", "telephone", "fax", "msisdn"), "phone"),
    **dict.fromkeys(("url", "uri", "link", "website", "homepage", "href", "permalink", "webhook"), "url"),
    **dict.fromkeys(("domain", "hostname", "host"), "domain"),
    **dict.fromkeys(("ip", "ipv4"), "ip"),
    **dict.fromkeys(("path", "filepath", "dir", "directory", "folder", "cwd"), "path"),
    **dict.fromkeys(("filename",), "filename"),
    **dict.fromkeys(("version", "firmware", "semver"), "version"),
    **dict.fromkeys(("country", "nationality"), "country"),
    **dict.fromkeys(("currency",), "currency"),
    **dict.fromkeys(("airport", "iata"), "airport"),
    **dict.fromkeys(("city", "town", "hometown"), "city"),
    **dict.fromkeys(("address", "street"), "address"),
    **dict.fromkeys(("language", "lang", "locale"), "language"),
    **dict.fromkeys(("color", "colour"), "color"),
    **dict.fromkeys(("hash", "sha", "sha1", "sha256", "checksum", "etag", "digest"), "hash"),
    **dict.fromkeys(("username", "handle", "login", "screenname"), "username"),
    **dict.fromkeys(("author", "owner", "assignee", "reviewer", "creator", "organizer", "organiser", "manager", "contact", "patient",
                     "doctor", "physician", "teacher", "instructor", "speaker", "player", "artist", "holder", "requester", "reporter",
                     "approver", "vet", "veterinarian", "nurse", "driver", "guest", "tenant", "landlord", "candidate", "employee",
                     "customer", "buyer", "seller", "student", "member", "person", "attendee", "passenger", "traveler", "traveller"),
                    "person"),
    **dict.fromkeys(("company", "vendor", "supplier", "publisher", "registrar", "outlet", "brand", "employer", "manufacturer",
                     "carrier", "airline", "organization", "organisation", "org", "agency", "merchant", "sponsor", "bank", "insurer",
                     "lender", "broker", "retailer", "distributor", "maker", "studio", "label_company"), "company"),
    **dict.fromkeys(("query", "q", "keyword", "keywords", "search", "term", "terms"), "search"),
    **dict.fromkeys(("title", "name", "subject", "headline", "caption", "heading", "label", "topic", "nickname"), "title"),
    **dict.fromkeys(("description", "desc", "body", "content", "message", "text", "notes", "note", "summary", "comment", "comments",
                     "bio", "details", "instructions", "reason", "feedback", "review", "answer", "response", "abstract", "transcript",
                     "snippet", "excerpt", "context", "diagnosis", "symptoms", "remarks", "memo", "explanation"), "text"),
    **dict.fromkeys(("tag", "tags", "category", "categories", "genre", "type", "kind", "segment", "species", "breed", "sector",
                     "industry", "department", "specialty", "specialization", "role", "channel", "platform", "format", "style",
                     "cuisine", "sport", "subject_area", "field", "discipline", "theme", "mood", "medium"), "term"),
    # numbers
    **dict.fromkeys(("price", "amount", "cost", "fee", "fees", "total", "subtotal", "balance", "revenue", "salary", "budget", "payment",
                     "refund", "tax", "income", "spend", "spent", "fare", "rent", "wage", "cap", "tvl", "liquidity", "value",
                     "valuation", "profit", "earnings", "premium", "deposit", "charge", "tip", "bid", "payout", "debt", "credit"), "money"),
    **dict.fromkeys(("percent", "pct", "percentage", "probability", "progress", "completion"), "percent"),
    **dict.fromkeys(("count", "quantity", "qty", "stock", "seats", "capacity", "views", "likes", "followers", "following", "subscribers",
                     "downloads", "members", "visitors", "stars", "shares", "forks", "retweets", "reposts", "clicks", "items", "units", "inventory", "attendees", "guests", "passengers",
                     "kb", "mb", "gb", "bytes", "kg", "lb", "lbs", "g", "km", "mi", "miles", "meters", "m", "cm", "mm", "ms", "sec",
                     "seconds", "min", "minutes", "hours", "days", "weeks", "nights", "calories", "steps", "pages", "words", "tokens",
                     "weight", "height", "length", "width", "distance", "duration", "size", "volume", "dose", "dosage"), "quantity"),
    **dict.fromkeys(("rating",), "rating"),
    **dict.fromkeys(("year",), "year"),
    **dict.fromkeys(("age",), "age"),
    **dict.fromkeys(("lat", "latitude"), "latitude"),
    **dict.fromkeys(("lon", "lng", "longitude"), "longitude"),
}
# ... the faker provider a column was declared with, when its name says nothing more specific
_PROVIDER = {"name": "person", "first_name": "person", "last_name": "person", "company": "company", "email": "email",
             "phone_number": "phone", "url": "url", "domain_name": "domain", "ipv4": "ip", "ipv4_public": "ip", "file_path": "path",
             "file_name": "filename", "country": "country", "currency_code": "currency", "city": "city", "street_address": "address",
             "user_name": "username", "sha1": "hash", "language_name": "language", "catch_phrase": "title", "bs": "title",
             "sentence": "text", "word": "term", "color_name": "color", "hex_color": "color"}
# words that carry no meaning of their own at the end of a column name
_NEUTRAL = frozenset(("at", "on", "date", "time", "ts", "timestamp", "datetime", "day", "utc", "local", "iso", "str", "raw", "full",
                      "display", "primary", "main", "current", "default", "official", "public", "short", "long", "id"))
_PEOPLE_TABLES = frozenset(("user", "customer", "patient", "author", "employee", "member", "student", "contact", "person", "people",
                            "player", "artist", "owner", "teacher", "doctor", "driver", "guest", "attendee", "speaker", "candidate",
                            "client", "subscriber", "reviewer", "instructor", "volunteer", "donor", "tenant", "staff", "physician",
                            "athlete", "creator", "musician", "host", "traveler", "traveller", "passenger", "buyer", "seller",
                            "applicant", "recipient", "assignee", "coach", "vet", "veterinarian", "agent", "participant", "admin"))
_ORG_TABLES = frozenset(("company", "organization", "organisation", "vendor", "supplier", "brand", "store", "shop", "restaurant",
                         "hotel", "airline", "bank", "agency", "publisher", "institution", "university", "school", "merchant",
                         "partner", "carrier", "lender", "insurer", "broker", "manufacturer", "retailer", "sponsor", "charity",
                         "employer", "firm", "startup", "clinic", "hospital", "pharmacy"))
_BOOKED = frozenset(("scheduled", "planned", "booked", "reserved", "due", "set", "slated"))
_ANIMAL_TABLES = frozenset(("pet", "animal", "dog", "cat", "horse", "puppy", "kitten"))
_TRAVEL_TABLES = frozenset(("flight", "fare", "route", "trip", "itinerary", "leg", "segment", "booking", "ticket", "departure", "arrival"))
_GENERIC_TYPES = frozenset(("person", "title", "term", "text", "search", "city"))
TEXT_TYPES = frozenset(("person", "pet_name", "date", "company", "email", "phone", "url", "domain", "ip", "path", "filename", "version", "country",
                        "currency", "airport", "city", "address", "language", "color", "hash", "username", "search", "title", "text",
                        "term", "slug"))
NUMBER_TYPES = frozenset(("money", "percent", "quantity", "rating", "year", "age", "latitude", "longitude"))


def semantic_type(column: str, table: str, storage: str = "text", provider: str | None = None, note: str = "") -> str | None:
    """The semantic type of a column, from its name, its table, the faker provider it was declared
    with and a kept description; None when nothing says what it holds (ids and foreign keys excluded)."""
    words = [w for w in tokens(column) if w not in _NEUTRAL] or list(tokens(column))
    noun = singular(tokens(table)[-1]) if tokens(table) else ""
    numeric = storage in ("int", "float")
    head = words[-1] if words else ""
    found = _HEAD.get(head) or _HEAD.get(singular(head))
    if head in ("number", "no", "num") and len(words) > 1 and words[-2] in ("phone", "mobile", "to", "from", "contact", "fax", "tel"):
        found = "phone" if not numeric else "quantity"
    if len(words) > 1 and words[-1] == "name":
        qualifier = words[-2]
        if qualifier in ("first", "last", "full", "given", "family", "middle") or _HEAD.get(qualifier) == "person" or qualifier in _PEOPLE_TABLES:
            found = "person"
        elif _HEAD.get(qualifier) == "company" or qualifier in _ORG_TABLES:
            found = "company"
        elif _HEAD.get(qualifier) in ("city", "country", "language", "airport", "filename"):
            found = _HEAD[qualifier]
        elif qualifier == "file":
            found = "filename"
        elif qualifier in ("user", "screen", "login"):
            found = "username"
    if head == "name" and len(words) == 1:
        found = "person" if noun in _PEOPLE_TABLES else "company" if noun in _ORG_TABLES else "pet_name" if noun in _ANIMAL_TABLES else "title"
    if head == "address" and len(words) > 1 and words[-2] in ("email", "mail", "e"):
        found = "email"
    if head == "address" and (noun in ("wallet", "contract", "account", "token") or provider in ("hexify", "ipv4")):
        found = None  # a wallet or network address, not a street
    if head == "address" and noun == "mailbox":
        found = "email"
    if head in ("origin", "destination", "departure", "arrival", "from", "to") and not numeric:
        found = "airport" if noun in _TRAVEL_TABLES or "flight" in note.lower() else "city"
    if not numeric and (head in ("date", "day", "birthday", "deadline") or head == "for" and len(words) > 1 and words[-2] in _BOOKED):
        found = "date"  # a date kept as text (scheduled_for, due_date)
    if head in ("location", "venue", "place", "hometown", "region") and not numeric and found is None:
        found = "city" if head != "region" else "term"
    if head == "file" and not numeric:
        found = "path"
    declared = _PROVIDER.get(provider)
    if found is None or (found in _GENERIC_TYPES and declared and declared not in _GENERIC_TYPES):
        found = declared  # an `owner` declared as a user name, an email or a company stays one
    if found is None:
        return None
    if numeric != (found in NUMBER_TYPES):
        if numeric:
            return None  # a number named like text (an integer `owner`): nothing to say
        if provider in _PROVIDER:
            return _PROVIDER[provider]  # a text column named like a number keeps what it was declared as
        return "term"
    return found


def column_semantic(c, table, notes: dict | None = None) -> str | None:
    """`semantic_type` of a spec column (None for keys, foreign keys, choices, dates and codes made by patterns)."""
    if c.gen in ("id", "fk", "date", "choice", "const"):
        return None
    provider = c.arg if isinstance(c.arg, str) else (c.arg[0] if isinstance(c.arg, tuple) and c.arg else None)
    if c.gen == "faker" and provider in ("bothify", "lexify", "numerify", "hexify", "slug", "sha1", "ipv4", "iban", "isbn13", "uuid4"):
        return {"sha1": "hash", "ipv4": "ip", "slug": "slug"}.get(provider) or ("version" if provider == "numerify" and c.arg[1].startswith("#.") else None)
    return semantic_type(c.name, table.name, c.type, provider if c.gen == "faker" else None, (notes or {}).get(f"{table.name}.{c.name}", ""))


# ------------------------------------------------------------------------------------------ real vocabularies

# Real airports (IATA code, city): facts, so an `origin_airport` reads like one.
AIRPORTS = (("ATL", "Atlanta"), ("LAX", "Los Angeles"), ("ORD", "Chicago"), ("DFW", "Dallas"), ("DEN", "Denver"), ("JFK", "New York"),
            ("SFO", "San Francisco"), ("SEA", "Seattle"), ("LAS", "Las Vegas"), ("MCO", "Orlando"), ("MIA", "Miami"), ("BOS", "Boston"),
            ("LHR", "London"), ("CDG", "Paris"), ("AMS", "Amsterdam"), ("FRA", "Frankfurt"), ("MAD", "Madrid"), ("BCN", "Barcelona"),
            ("FCO", "Rome"), ("MUC", "Munich"), ("ZRH", "Zurich"), ("VIE", "Vienna"), ("CPH", "Copenhagen"), ("DUB", "Dublin"),
            ("LIS", "Lisbon"), ("IST", "Istanbul"), ("DXB", "Dubai"), ("DOH", "Doha"), ("SIN", "Singapore"), ("HKG", "Hong Kong"),
            ("NRT", "Tokyo"), ("ICN", "Seoul"), ("PEK", "Beijing"), ("PVG", "Shanghai"), ("BKK", "Bangkok"), ("DEL", "Delhi"),
            ("BOM", "Mumbai"), ("SYD", "Sydney"), ("MEL", "Melbourne"), ("AKL", "Auckland"), ("YYZ", "Toronto"), ("YVR", "Vancouver"),
            ("MEX", "Mexico City"), ("GRU", "Sao Paulo"), ("EZE", "Buenos Aires"), ("JNB", "Johannesburg"), ("CAI", "Cairo"),
            ("NBO", "Nairobi"), ("ARN", "Stockholm"), ("OSL", "Oslo"), ("HEL", "Helsinki"), ("ATH", "Athens"), ("PRG", "Prague"))
AIRPORT_CODES = frozenset(a for a, _ in AIRPORTS)
CITIES = tuple(sorted({c for _, c in AIRPORTS}))


@lru_cache(maxsize=1)
def _countries() -> frozenset[str]:
    from faker.providers.address.en_US import Provider

    return frozenset(Provider.countries) | frozenset(Provider.alpha_2_country_codes) | frozenset(Provider.alpha_3_country_codes)


@lru_cache(maxsize=1)
def _currencies() -> frozenset[str]:
    from faker.providers.currency import Provider

    return frozenset(code for code, _ in Provider.currencies) | frozenset(("BTC", "ETH", "USDT", "USDC", "SOL"))


@lru_cache(maxsize=1)
def _spoken_languages() -> tuple[str, ...]:
    from faker.providers.person import Provider as Person

    return tuple(sorted(getattr(Person, "language_names", ()))) or ("English", "Spanish", "French", "German")


@lru_cache(maxsize=1)
def _languages() -> frozenset[str]:
    from faker.providers.lorem import Provider  # noqa: F401  (the language names live on the person provider)
    from faker.providers.person import Provider as Person

    names = getattr(Person, "language_names", ())
    programming = ("Python", "Javascript", "Typescript", "Go", "Rust", "Java", "Ruby", "Php", "Kotlin", "Swift", "Scala", "Haskell", "Perl", "Lua",
                   "Dart", "Elixir", "Julia", "Shell", "Bash", "Sql", "Html", "Css", "C", "C++", "C#", "R")
    return frozenset(names) | frozenset(("English", "Spanish", "French", "German", "JavaScript", "TypeScript", *programming))


# ------------------------------------------------------------------------------------------ values

_QUALIFIERS = ("Spring", "Summer", "Autumn", "Winter", "North", "South", "East", "West", "Main", "Pilot", "Annual", "Weekly",
               "Monthly", "Core", "Premium", "Standard", "Express", "Family", "Starter", "Pro", "Classic", "Priority", "Regional")
_FACETS = ("basics", "advanced", "setup", "reference", "tips", "pricing", "support", "security", "reports", "planning", "research",
           "operations", "analytics", "compliance", "integrations", "quality", "training", "tooling", "archive", "review")
_ASKS = ("asked about", "wants an update on", "reported a problem with", "needs help with", "left feedback on", "requested a change to",
         "confirmed", "asked to reschedule", "followed up on", "has a question about")


_MAIL_DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "proton.me", "example.com", "example.org")


@lru_cache(maxsize=1)
def _name_lists() -> tuple[tuple[str, ...], tuple[str, ...]]:
    from faker.providers.person.en_US import Provider

    return tuple(sorted(Provider.first_names)), tuple(sorted(Provider.last_names))


_SLUG_SUFFIXES = ("api", "service", "worker", "core", "web", "sync", "cli", "sdk", "tools", "engine", "gateway", "utils", "client", "server",
                  "main", "dev", "v2", "lite", "plugin", "app")
# first segments of the made-up file paths a world's path-typed values hold ("/shared/reports/q3.pdf"); nothing is read
# from them (changing one would change every generated world's values)
_FOLDERS = ("home", "srv", "data", "docs", "projects", "shared", "archive", "reports", "src", "var")
_EXTENSIONS = ("pdf", "csv", "json", "md", "txt", "py", "png", "xlsx", "docx", "yaml")


class ValueMaker:
    """Values of one semantic type for one theme, drawn from a seeded Faker and numpy generator."""

    def __init__(self, spec, fake, rng):
        self.fake, self.rng = fake, rng
        self.vocab = [w for w in domain_words(spec) if len(w) <= 14] or ["record"]
        self.first, self.last = _name_lists()
        self.examples = (spec.extra.get("examples") if isinstance(spec.extra, dict) else None) or {}

    # Faker's person and email providers draw each name through weighted sampling (most of a build's
    # time); the same first and last name lists, drawn uniformly with numpy, are as real and far cheaper.
    def person(self) -> str:
        return f"{self.pick(self.first)} {self.pick(self.last)}"

    def username(self) -> str:
        first, last = self.pick(self.first).lower(), self.pick(self.last).lower()
        return self.pick((f"{first}.{last}", f"{first}{last[:1]}", f"{first[:1]}{last}{int(self.rng.integers(1, 99))}", f"{last}_{first}"))

    def email(self) -> str:
        return f"{self.username().replace('_', '.')}@{self.pick(_MAIL_DOMAINS)}"

    def title(self, noun: str) -> str:
        """A record's title in one of a few real shapes. Its first word is a surname or a city: search
        tools are exercised with a title's first word, which should find one record, not every one."""
        shape = int(self.rng.integers(4))
        if shape < 2:
            return f"{self.pick(self.last)} {self.pick(self.vocab).title()}"
        if shape == 2:
            return f"{self.pick(CITIES)} {self.pick(self.vocab).title()}"
        return f"{self.pick(CITIES)} {self.pick(_QUALIFIERS)} {noun}"

    def term(self) -> str:
        roll = self.rng.random()
        if roll < 0.2:
            return self.pick(self.vocab)
        return f"{self.pick(_FACETS)} {self.pick(self.vocab)}" if roll < 0.7 else f"{self.pick(self.vocab)} {self.pick(_FACETS)}"

    def text(self, noun: str) -> str:
        return f"{self.pick(self.first)} {self.pick(_ASKS)} the {self.pick(self.vocab)} {noun}."

    def path(self) -> str:
        folders = [self.pick(_FOLDERS if i == 0 else self.vocab) for i in range(int(self.rng.integers(1, 4)))]
        return "/" + "/".join(folders) + f"/{self.pick(self.vocab)}_{int(self.rng.integers(1, 99))}.{self.pick(_EXTENSIONS)}"

    def unique(self, kind: str, values: list) -> list | None:
        """`values` made distinct by numbering repeats ('billing-api', 'billing-api-2'); None for a type a
        number would spoil (an email, a country)."""
        if len(set(values)) == len(values):
            return values
        if kind not in ("slug", "title", "term", "search", "text", "path", "filename", "username"):
            return None
        seen: dict = {}
        out = []
        for v in values:
            seen[v] = seen.get(v, 0) + 1
            if seen[v] == 1:
                out.append(v)
            elif kind in ("path", "filename"):
                stem_, dot, ext = v.rpartition(".")
                out.append(f"{stem_}-{seen[v]}.{ext}" if dot else f"{v}-{seen[v]}")
            else:
                out.append(f"{v}{' ' if kind in ('title', 'text', 'search') else '-'}{seen[v]}")
        return out if len(set(out)) == len(out) else None

    def pick(self, xs):
        return xs[int(self.rng.integers(len(xs)))]

    def many(self, kind: str, n: int, column: str, table: str) -> list:
        f, pick = self.fake, self.pick
        noun = singular(tokens(table)[-1]) if tokens(table) else "record"
        simple = {"person": self.person, "company": f.company, "email": self.email, "phone": f.phone_number, "domain": f.domain_name,
                  "ip": f.ipv4_public, "country": f.country, "currency": f.currency_code,
                  "address": f.street_address, "username": self.username, "hash": f.sha1, "color": f.color_name,
                  "filename": lambda: self.path().rsplit("/", 1)[1]}
        if kind == "pet_name" or kind == "person" and tokens(column)[:1] == ("first",):
            return [pick(self.first) for _ in range(n)]
        if kind == "person" and tokens(column)[:1] in (("last",), ("family",)):
            return [pick(self.last) for _ in range(n)]
        if kind in simple:
            return [simple[kind]() for _ in range(n)]
        if kind == "url":
            return [f"https://{f.domain_name()}/{noun}/{pick(self.vocab)}-{int(self.rng.integers(1, 999))}" for _ in range(n)]
        if kind == "path":
            return [self.path() for _ in range(n)]
        if kind == "version":
            return [f"{int(a)}.{int(b)}.{int(c)}" for a, b, c in zip(self.rng.integers(0, 6, n), self.rng.integers(0, 20, n), self.rng.integers(0, 30, n), strict=True)]
        if kind == "airport":
            return [pick(AIRPORTS)[0] for _ in range(n)]
        if kind == "city":
            return [pick(CITIES) for _ in range(n)]
        if kind == "language":
            langs = _spoken_languages()
            return [pick(langs) for _ in range(n)]
        if kind == "search":
            return [f"{pick(self.vocab)} {pick(self.vocab)}" if self.rng.random() < 0.5 else f"{pick(CITIES).lower()} {pick(self.vocab)}" for _ in range(n)]
        if kind == "date":
            days = self.rng.integers(0, 517, n)  # 2024-01-01 .. 2025-05-31, the span every generated date keeps to
            return [(date(2024, 1, 1) + timedelta(days=int(d))).isoformat() for d in days]
        if kind == "slug":
            return [f"{pick(self.vocab)}-{pick(_SLUG_SUFFIXES)}" for _ in range(n)]
        if kind == "term":  # a domain word, often narrowed ('memory', 'memory tooling', 'security memory'): tags stay telling
            return [self.term() for _ in range(n)]
        if kind == "title":
            return [self.title(noun.replace("_", " ").title()) for _ in range(n)]
        if kind == "text":
            return [self.text(noun.replace("_", " ")) for _ in range(n)]
        raise ValueError(f"no values for semantic type {kind!r}")


# ------------------------------------------------------------------------------------------ plausibility

_RE = {
    "email": re.compile(r"^[\w.+-]+@[\w-]+(\.[\w-]+)+$"),
    "url": re.compile(r"^https?://[^\s/]+\.[^\s/]+(/\S*)?$"),
    "domain": re.compile(r"^([a-z0-9-]+\.)+[a-z]{2,}$", re.I),
    "ip": re.compile(r"^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$"),
    "filename": re.compile(r"^[\w .-]+\.[A-Za-z0-9]{1,5}$"),
    "version": re.compile(r"^v?\d+(\.\d+){1,3}([-+.][\w.]+)?$"),
    "hash": re.compile(r"^(0x)?[0-9a-f]{8,}$", re.I),
    "username": re.compile(r"^@?[\w.-]{2,40}$"),
    "slug": re.compile(r"^[a-z0-9]+([-_./][a-z0-9]+)*$"),
    "person": re.compile(r"^([A-Z][A-Za-z'.-]*\.?)( [A-Z][A-Za-z'.-]*\.?)*$"),
    "pet_name": re.compile(r"^[A-Z][a-z'-]+$"),
    "city": re.compile(r"^[A-Z][A-Za-z .'-]+$"),
}


def plausible(kind: str, value, vocabulary=frozenset()) -> bool:
    """Whether a (non-null) value is plausible for its semantic type."""
    if kind in NUMBER_TYPES:
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return False
        lo, hi = {"money": (0, 1e13), "percent": (0, 100), "quantity": (0, 1e13), "rating": (0, 10), "year": (1800, 2100),
                  "age": (0, 130), "latitude": (-90, 90), "longitude": (-180, 180)}[kind]
        return lo <= value <= hi
    if not isinstance(value, str) or not value.strip():
        return False
    v = value.strip()
    if kind == "phone":
        digits = sum(ch.isdigit() for ch in v)
        return 7 <= digits <= 20 and re.fullmatch(r"[\d\s().+x-]+", v) is not None
    if kind == "country":  # a name or an ISO code, in either case ('gb', 'GBR')
        return v in _countries() or v.upper() in _countries()
    if kind == "currency":
        return v.upper() in _currencies()
    if kind == "airport":
        return v.upper() in AIRPORT_CODES or re.fullmatch(r"[A-Z]{3}", v) is not None and v in AIRPORT_CODES
    if kind == "language":  # a language (spoken or programming) in either case, or a locale code
        return v in _languages() or v.title() in _languages() or re.fullmatch(r"[a-z]{2}([-_][A-Za-z]{2})?", v) is not None
    if kind == "path":
        return "/" in v and " " not in v.strip("/")
    if kind == "address":
        return any(ch.isdigit() for ch in v) and any(ch.isalpha() for ch in v)
    if kind == "color":
        return re.fullmatch(r"#[0-9a-fA-F]{6}", v) is not None or v.replace(" ", "").isalpha()
    if kind == "ip":
        m = _RE["ip"].match(v)
        return bool(m) and all(int(x) < 256 for x in m.groups())
    if kind == "slug":
        return _RE["slug"].match(v) is not None and not is_lorem(v, vocabulary)
    if kind == "date":
        return value_kind(v) == "date"
    if kind in _RE:
        return _RE[kind].match(v) is not None
    return not is_lorem(v, vocabulary)  # company, title, text, search, term: real words of the theme, not filler


# ------------------------------------------------------------------------------------------ constraints

START_WORDS = frozenset(("start", "starts", "started", "starting", "begin", "begins", "began", "beginning", "from", "since", "open",
                         "opens", "opened", "opening", "min", "minimum", "lo", "low", "lower", "first", "earliest", "in", "checkin",
                         "departure", "depart", "departs", "departed", "created", "creation", "issued", "onset", "initial", "launch",
                         "launched", "born", "birth", "enter", "entered", "entry", "pickup", "signed", "joined", "registered", "submitted", "pre",
                         "before"))
END_WORDS = frozenset(("end", "ends", "ended", "ending", "finish", "finished", "finishes", "stop", "stopped", "to", "until", "till",
                       "through", "thru", "close", "closes", "closed", "closing", "max", "maximum", "hi", "high", "upper", "last",
                       "latest", "out", "checkout", "arrival", "arrive", "arrives", "arrived", "expiry", "expires", "expired",
                       "expiration", "due", "deadline", "final", "terminated", "completed", "resolved", "updated", "modified",
                       "exit", "exited", "dropoff", "return", "returned", "death", "died", "retired", "cancelled", "canceled", "post", "after"))
# bounds that make a range whatever they bound (min_price/max_price, temp_low/temp_high)
RANGE_WORDS = frozenset(("min", "max", "minimum", "maximum", "lo", "hi", "low", "high", "lower", "upper"))
# bounds of a position (start_index/end_index, from_row/to_row, first_page/last_page)
_NUMERIC_BOUNDS = frozenset(("start", "end", "begin", "first", "last", "from", "to", "until", "through", "thru", "initial", "final",
                             "earliest", "latest"))
_POSITIONAL = frozenset(("from", "to", "in", "out", "through", "thru", "till", "until", "since", "created", "updated",
                                      "modified", "due", "arrival", "departure"))
_POSITIONAL = frozenset(("index", "idx", "row", "line", "page", "offset", "position", "pos", "col", "column", "char", "byte", "year",
                         "hour", "minute", "second", "block", "frame", "height", "level", "age", "version", "seq", "sequence",
                         "number", "no", "time", "ms"))
CREATION_WORDS = frozenset(("created", "creation", "registered", "opened", "joined", "submitted", "placed", "ordered", "added",
                            "posted", "filed", "signup", "enrolled", "issued", "requested", "reported", "logged", "uploaded"))


def _role(word: str) -> str | None:
    if word in START_WORDS:
        return "start"
    if word in END_WORDS:
        return "end"
    return None


def _split_role(name: str) -> tuple[str | None, str | None, tuple[str, ...]]:
    """(role, role word, the other words) of a column name: 'check_out_date' -> ('end', 'out', ('check',))."""
    words = [w for w in tokens(name) if w not in _NEUTRAL or w == "time"]
    words = [w for w in words if w not in ("at", "on", "date", "ts", "timestamp", "datetime", "day")] or words
    roles = [(i, w, _role(w)) for i, w in enumerate(words) if _role(w)]
    if len(roles) != 1:
        return None, None, tuple(words)
    i, w, r = roles[0]
    return r, w, tuple(words[:i] + words[i + 1:])


def value_kind(v) -> str | None:
    """'date' for ISO dates and datetimes, 'time' for HH:MM, 'number' for numbers; None otherwise."""
    if isinstance(v, bool) or v is None:
        return None
    if isinstance(v, (int, float)):
        return "number"
    if isinstance(v, str):
        if re.fullmatch(r"\d{4}-\d{2}-\d{2}([ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?", v):
            return "date"
        if re.fullmatch(r"\d{2}:\d{2}(:\d{2})?", v):
            return "time"
    return None


def order_pairs(columns: dict[str, str]) -> list[tuple[str, str]]:
    """(start, end) column pairs among `columns` ({name: value kind}): same kind, names that differ only
    in a start-like and an end-like word. Numbers pair on from/to, in/out ... only when what they
    count is a position (start_index/end_index, from_row/to_row), never two amounts."""
    split = {c: _split_role(c) for c in columns}
    out = _negated_pairs(columns)
    for a, (ra, wa, rest_a) in split.items():
        if ra != "start":
            continue
        for b, (rb, wb, rest_b) in split.items():
            if rb != "end" or a == b or columns[a] != columns[b] or columns[a] is None:
                continue
            if rest_a != rest_b and not (columns[a] in ("date", "time") and (not rest_a or not rest_b or wa in CREATION_WORDS)):
                continue
            if columns[a] == "number" and not ({wa, wb} <= RANGE_WORDS or {wa, wb} <= _NUMERIC_BOUNDS and (not rest_a or set(rest_a) & _POSITIONAL)):
                continue  # open/close prices, from/to amounts: two quantities, not a range
            out.append((a, b))
    return out


_UNDO = ("dis", "un", "de", "de-")  # embark/disembark, load/unload, board/deboard, mount/dismount


def _negated_pairs(columns: dict[str, str]) -> list[tuple[str, str]]:
    """Dates whose names differ only in a word and its undoing (embarked_at/disembarked_at,
    loaded_on/unloaded_on): the undoing comes after."""
    out = []
    words = {c: tokens(c) for c, k in columns.items() if k in ("date", "time")}
    for a, wa in words.items():
        for b, wb in words.items():
            if a == b or len(wa) != len(wb) or columns[a] != columns[b]:
                continue
            diff = [(x, y) for x, y in zip(wa, wb, strict=True) if x != y]
            if len(diff) == 1 and any(diff[0][1] == pre + diff[0][0] for pre in _UNDO):
                out.append((a, b))
    return out


def _topological(cols: list[str], pairs: list[tuple[str, str]]) -> list[str] | None:
    after = {c: set() for c in cols}
    for a, b in pairs:
        after[b].add(a)
    done: list[str] = []
    while len(done) < len(cols):
        ready = [c for c in cols if c not in done and after[c] <= set(done)]
        if not ready:
            return None  # a cycle (x_from/x_to/x_from again): leave the row as drawn
        done.append(ready[0])
    return done


def order_row(row: dict, pairs: list[tuple[str, str]]) -> None:
    """Put a row's paired values in order: swap each reversed pair (both values stay ones the generator
    drew), then raise every end to at least each of its starts along a topological order of the pairs,
    so chains (created <= start <= end <= closed) hold too. Values only rise in the second pass, so a
    creation date already placed after its parent's stays there."""
    cols = sorted({c for p in pairs for c in p})
    live = [c for c in cols if row.get(c) is not None]
    live_pairs = [p for p in pairs if p[0] in live and p[1] in live]
    order = _topological(live, live_pairs)
    if not order:
        return
    rank = {c: i for i, c in enumerate(order)}
    for a, b in sorted(live_pairs, key=lambda p: (rank[p[0]], rank[p[1]])):
        if row[b] < row[a]:
            row[a], row[b] = row[b], row[a]
    raise_ends(row, live_pairs, order)


def raise_ends(row: dict, pairs: list[tuple[str, str]], order: list[str]) -> None:
    for c in order:
        for a, b in pairs:
            if b == c and row.get(a) is not None and row.get(c) is not None and row[c] < row[a]:
                row[c] = row[a]


def creation_column(columns: dict[str, str]) -> str | None:
    """The column holding when a row came into being (created_at, opened_on, joined, placed_at ...)."""
    for c, kind in columns.items():
        if kind == "date" and set(tokens(c)) & CREATION_WORDS:
            return c
    return None


def status_column(names) -> str | None:
    for c in names:
        w = tokens(c)
        if w and w[-1] in ("status", "state", "stage") and len(w) <= 2:
            return c
    return None


# progressions: a later state means the earlier events happened too (delivered => shipped)
PROGRESSIONS = (("ordered", "placed", "paid", "processing", "packed", "shipped", "delivered"), ("queued", "sent", "delivered", "read"),
                ("submitted", "reviewed", "approved", "published"), ("scheduled", "started", "completed"))


def event_columns(status_values, columns: dict[str, str]) -> dict[str, tuple[set, set]]:
    """{column: (states in which its event has happened, states in which it has not yet)} for each column
    whose words share a stem with a status value (shipped ~ shipped_at / ship_date, refunded ~
    refund_amount). Happened: that state and the later ones of a progression (delivered => shipped).
    Not yet: the earlier ones of a progression and the open states (pending, active, draft ...). Any
    other state (cancelled, failed) may or may not have seen the event."""
    out: dict[str, tuple[set, set]] = {}
    values = [v for v in status_values if isinstance(v, str)]
    for c, kind in columns.items():
        words = tokens(c)
        if kind not in ("date", "number") or set(words) & (CREATION_WORDS | _SCHEDULED) or _split_role(c)[0] == "start":
            continue  # when a record began, or a date it is due or expires, is set whatever its state now
        if kind == "number" and not set(words) & _EVENT_AMOUNTS:
            continue  # a count or a percentage is not an event's record
        stems = [stem(w) for w in words if w not in _NEUTRAL and w not in ("amount", "total", "value", "fee", "sum")]
        for v in values:
            vs = stem(tokens(v)[-1]) if tokens(v) else ""
            if len(vs) < 3 or vs not in stems:
                continue
            happened, not_yet = {v}, {x for x in values if set(tokens(x)) & OPEN_STATES and x != v}
            for chain in PROGRESSIONS:
                low = [stem(x) for x in chain]
                if vs in low:
                    i = low.index(vs)
                    happened |= {x for x in values if tokens(x) and stem(tokens(x)[-1]) in low[i:]}
                    not_yet |= {x for x in values if tokens(x) and stem(tokens(x)[-1]) in low[:i]}
            out[c] = (happened, not_yet - happened)
    return out


OPEN_STATES = frozenset(("pending", "active", "open", "new", "draft", "queued", "scheduled", "planned", "requested", "waiting", "upcoming",
                         "processing", "progress", "unpaid", "unshipped", "awaiting", "created", "submitted", "booked", "confirmed"))
_SCHEDULED = frozenset(("expires", "expiry", "expiration", "due", "deadline", "until", "till", "valid", "renewal", "renews", "scheduled",
                        "planned", "estimated", "eta", "next"))
_EVENT_AMOUNTS = frozenset(("amount", "total", "value", "fee", "sum", "paid", "refund", "refunded"))


def line_columns(child_table: str, child_columns: dict[str, str]) -> str | None:
    """The amount column of a line table (order_items.line_total, invoice_lines.amount ...), or None when
    the table is not a line table."""
    words = set(tokens(child_table)) | {singular(w) for w in tokens(child_table)}
    if not words & {"line", "item", "entry", "lineitem", "position"}:
        return None
    for c, kind in child_columns.items():
        w = tokens(c)
        if kind == "number" and w and w[-1] in ("total", "amount", "subtotal") and (len(w) == 1 or w[0] in ("line", "item", "row")):
            return c
    return None


def total_column(columns: dict[str, str]) -> str | None:
    for c, kind in columns.items():
        w = tokens(c)
        if kind == "number" and w and ("total" in w or w[-1] == "subtotal") and not set(w) & {"count", "items", "lines", "quantity", "qty"}:
            return c
    return None


def count_columns(columns: dict[str, str], child_table: str) -> list[str]:
    """Columns of a parent counting `child_table`'s rows: item_count, num_items, items_count, n_items ..."""
    child = {singular(w) for w in tokens(child_table)}
    last = singular(tokens(child_table)[-1]) if tokens(child_table) else ""
    out = []
    for c, kind in columns.items():
        w = tokens(c)
        if kind != "number" or not set(w) & {"count", "num", "n", "number", "total"}:
            continue
        rest = [singular(x) for x in w if x not in ("count", "num", "n", "number", "total", "of")]
        if rest and rest[-1] == last and set(rest) <= child:
            out.append(c)
    return out


# ------------------------------------------------------------------------------------------ enforcing (at build time)


def _spec_kinds(table, rows: list[dict]) -> dict[str, str]:
    """Value kinds of a table's non-key columns from their generators (a text column by its values)."""
    out = {}
    texts = []
    for c in table.columns:
        if c.gen in ("id", "fk"):
            continue
        if c.gen == "date":
            out[c.name] = "date"
        elif c.type in ("int", "float"):
            out[c.name] = "number"
        else:
            texts.append(c.name)
    if texts:
        out.update({c: k for c, k in _kinds_of([{c: r.get(c) for c in texts} for r in rows], 8).items()})
    return out


def _kinds_of(rows: list[dict], sample: int = 50) -> dict[str, str]:
    kinds: dict[str, str | None] = {}
    for r in rows[:sample]:
        for c, v in r.items():
            k = value_kind(v)
            if k is None:
                if v is not None:
                    kinds[c] = None
                continue
            if kinds.get(c, k) != k:
                kinds[c] = None
            elif c not in kinds:
                kinds[c] = k
    return {c: k for c, k in kinds.items() if k}


def _plus_days(iso: str, days: int, cap: str) -> str:
    d = (datetime.fromisoformat(iso[:19]) if len(iso) > 10 else date.fromisoformat(iso)) + timedelta(days=days)
    out = d.isoformat()[: len(iso)] if len(iso) > 10 else d.isoformat()
    return min(out, cap[: len(out)]) if cap else out


def enforce(spec, rows: dict[str, list[dict]], rng) -> None:
    """Make generated rows keep the world's constraints (see the module docstring), table by table in
    the spec's order (parents before children)."""
    cap = spec.now[:10] if len(spec.now) >= 10 else ""
    created: dict[str, dict] = {}
    kinds_of: dict[str, dict] = {}
    for table in spec.tables:
        data = rows.get(table.name) or []
        if not data:
            continue
        kinds = kinds_of[table.name] = _spec_kinds(table, data)
        status = status_column([c.name for c in table.columns])
        status_col = next((c for c in table.columns if c.name == status and c.gen == "choice"), None)
        if status_col is not None:  # the columns recording a state's event are set exactly in that state
            for col, (happened, not_yet) in event_columns(status_col.arg, kinds).items():
                for r in data:
                    if r.get(status) in happened:
                        if r.get(col) in (None, 0, 0.0):
                            r[col] = _fill_event(kinds[col], data, col, rng)
                    elif r.get(status) in not_yet:
                        r[col] = None if kinds[col] == "date" else 0
        pairs = order_pairs(kinds)
        order = _topological(sorted({c for p in pairs for c in p}), pairs) or []
        birth = creation_column(kinds)
        fks = [c for c in table.columns if c.gen == "fk" and c.arg in created]
        for r in data:
            if pairs:
                order_row(r, pairs)
            for fk in fks if birth else ():  # a child comes into being after its parent
                parent_born = created[fk.arg].get(r.get(fk.name))
                if parent_born and r.get(birth) and r[birth] < parent_born[: len(r[birth])]:
                    r[birth] = _plus_days(parent_born[: len(r[birth])], int(rng.integers(0, 15)), cap)
                    raise_ends(r, pairs, order)
        if birth:
            created[table.name] = {r[table.pk]: r[birth] for r in data if r.get(birth)}
    _enforce_aggregates(spec, rows, kinds_of)


def _fill_event(kind: str, data: list[dict], col: str, rng):
    seen = [r[col] for r in data if r.get(col) not in (None, 0, 0.0)]
    if seen:
        return seen[int(rng.integers(len(seen)))]
    return "2025-03-01" if kind == "date" else round(float(rng.uniform(5, 200)), 2)


def _children(spec, parent: str):
    for t in spec.tables:
        for c in t.columns:
            if c.gen == "fk" and c.arg == parent and t.name != parent:
                yield t, c.name


def _enforce_aggregates(spec, rows: dict[str, list[dict]], kinds_of: dict[str, dict]) -> None:
    for parent in spec.tables:
        data = rows.get(parent.name) or []
        if not data:
            continue
        kinds = kinds_of.get(parent.name, {})
        total = total_column(kinds)
        for child, fk in _children(spec, parent.name):
            kids = rows.get(child.name) or []
            ckinds = kinds_of.get(child.name, {})
            line = line_columns(child.name, ckinds)
            if total and line:
                sums: dict = {}
                for k in kids:
                    sums[k[fk]] = sums.get(k[fk], 0) + (k[line] or 0)
                integer = all(isinstance(r.get(total), int) for r in data if r.get(total) is not None)
                for r in data:
                    s = sums.get(r[parent.pk], 0)
                    r[total] = int(s) if integer else round(s, 2)
            for col in count_columns(kinds, child.name):
                n: dict = {}
                for k in kids:
                    n[k[fk]] = n.get(k[fk], 0) + 1
                for r in data:
                    r[col] = n.get(r[parent.pk], 0)


# ------------------------------------------------------------------------------------------ checking (after)


CHECKS = ("order", "lineage", "status", "totals", "counts")


def _table_rows(conn, table: str) -> tuple[list[str], list[dict]]:
    cur = conn.execute(f'SELECT * FROM {sql_name(table)}')
    names = [d[0] for d in cur.description]
    return names, [dict(zip(names, r, strict=True)) for r in cur.fetchall()]


def _foreign_keys(conn, table: str) -> list[tuple[str, str, str]]:
    return [(r[3], r[2], r[4]) for r in conn.execute(f'PRAGMA foreign_key_list({sql_name(table)})')]  # (column, parent table, parent column)


def violations(conn, limit: int = 50) -> dict:
    """Order and consistency violations of a built world, found from its schema and values alone
    (names, value kinds, foreign keys, status values): {"order": [...], "lineage": [...], "status":
    [...], "totals": [...], "counts": [...]}, each a list of 'table.column row-key: what is wrong'."""
    out: dict[str, list[str]] = {k: [] for k in CHECKS}
    tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")]
    data = {t: _table_rows(conn, t) for t in tables}
    keys = {t: {r[3] for r in conn.execute(f'PRAGMA foreign_key_list({sql_name(t)})')} | {r[1] for r in conn.execute(f'PRAGMA table_info({sql_name(t)})') if r[5]}
            for t in tables}
    kinds = {t: {c: k for c, k in _kinds_of(rows).items() if c not in keys[t]} for t, (_, rows) in data.items()}
    pk = {t: next((r[1] for r in conn.execute(f'PRAGMA table_info({sql_name(t)})') if r[5] == 1), data[t][0][0] if data[t][0] else None) for t in tables}
    births = {t: creation_column(kinds[t]) for t in tables}
    for t in tables:
        names, rows = data[t]
        for a, b in order_pairs(kinds[t]):
            for r in rows:
                if r[a] is not None and r[b] is not None and value_kind(r[a]) == value_kind(r[b]) and r[b] < r[a]:
                    out["order"].append(f"{t}.{a}>{b} {r.get(pk[t])}: {r[a]} > {r[b]}")
        birth = births[t]
        for col, parent, pcol in _foreign_keys(conn, t):
            pbirth = births.get(parent)
            if not birth or not pbirth or parent == t:
                continue
            when = {r[pcol]: r[pbirth] for r in data[parent][1]}
            for r in rows:
                p = when.get(r[col])
                if p and r[birth] and r[birth] < p[: len(r[birth])]:
                    out["lineage"].append(f"{t}.{birth} {r.get(pk[t])}: {r[birth]} before its {parent} {r[col]} ({p})")
        status = status_column(names)
        if status:
            values = sorted({r[status] for r in rows if isinstance(r[status], str)})
            for col, (happened, not_yet) in event_columns(values, kinds[t]).items():
                for r in rows:
                    has = r[col] not in (None, 0, 0.0, "")
                    if (r[status] in happened and not has) or (r[status] in not_yet and has):
                        out["status"].append(f"{t}.{col} {r.get(pk[t])}: status {r[status]!r} with {col}={r[col]!r}")
    for parent in tables:
        for child in tables:
            for col, ptab, pcol in _foreign_keys(conn, child):
                if ptab != parent or child == parent:
                    continue
                kids = data[child][1]
                line = line_columns(child, kinds[child])
                total = total_column(kinds[parent])
                if line and total:
                    sums: dict = {}
                    for k in kids:
                        sums[k[col]] = sums.get(k[col], 0) + (k[line] or 0)
                    for r in data[parent][1]:
                        if r[total] is not None and abs(r[total] - sums.get(r[pcol], 0)) > 0.011:
                            out["totals"].append(f"{parent}.{total} {r[pcol]}: {r[total]} != sum of {child}.{line} {round(sums.get(r[pcol], 0), 2)}")
                for cc in count_columns(kinds[parent], child):
                    n: dict = {}
                    for k in kids:
                        n[k[col]] = n.get(k[col], 0) + 1
                    for r in data[parent][1]:
                        if r[cc] is not None and r[cc] != n.get(r[pcol], 0):
                            out["counts"].append(f"{parent}.{cc} {r[pcol]}: {r[cc]} != {n.get(r[pcol], 0)} rows of {child}")
    return {k: v[:limit] if limit else v for k, v in out.items()} | {"n_" + k: len(v) for k, v in out.items()}


def type_report(spec, conn) -> dict[str, dict]:
    """Per semantic type: {"cells": n, "implausible": n, "examples": [...]} over the built world's typed columns."""
    vocab = theme_vocabulary(spec)
    notes = (spec.extra or {}).get("notes") if isinstance(spec.extra, dict) else None
    documented = (spec.extra or {}).get("examples") or {} if isinstance(spec.extra, dict) else {}
    out: dict[str, dict] = {}
    for t in spec.tables:
        for c in t.columns:
            kind = column_semantic(c, t, notes)
            if kind is None:
                continue
            rec = out.setdefault(kind, {"cells": 0, "implausible": 0, "examples": []})
            for (v,) in conn.execute(f'SELECT {sql_name(c.name)} FROM {sql_name(t.name)} WHERE {sql_name(c.name)} IS NOT NULL'):
                rec["cells"] += 1
                if not plausible(kind, v, vocab) and v not in documented.get(f"{t.name}.{c.name}", ()):  # the server's own examples are real values
                    rec["implausible"] += 1
                    if len(rec["examples"]) < 3:
                        rec["examples"].append(f"{spec.id}:{t.name}.{c.name}={str(v)[:40]!r}")
    return out


_SHAPED = frozenset(("pet_name", "date", "email", "phone", "url", "domain", "ip", "path", "filename", "version", "country", "currency", "airport",
                     "language", "color", "hash", "username", "person", "address", "city"))


def lorem_report(spec, conn) -> tuple[int, int, list[str]]:
    """(text cells, filler cells, examples) over the prose of a world: text columns but keys, dates and
    values with a shape of their own."""
    vocab = theme_vocabulary(spec)
    notes = (spec.extra or {}).get("notes") if isinstance(spec.extra, dict) else None
    cells = lorem = 0
    examples: list[str] = []
    for t in spec.tables:
        for c in t.columns:
            if c.gen in ("id", "fk", "date", "const") or c.type != "text" or column_semantic(c, t, notes) in _SHAPED:
                continue  # a key, a date, or a value with a shape of its own (an email, a path, a currency code)
            for (v,) in conn.execute(f'SELECT {sql_name(c.name)} FROM {sql_name(t.name)} WHERE {sql_name(c.name)} IS NOT NULL'):
                if not isinstance(v, str) or value_kind(v):
                    continue
                cells += 1
                if is_lorem(v, vocab):
                    lorem += 1
                    if len(examples) < 3:
                        examples.append(f"{spec.id}:{t.name}.{c.name}={v[:40]!r}")
    return cells, lorem, examples
