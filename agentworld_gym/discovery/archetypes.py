"""The archetype library: for each L2 category, third-level labels and a handful of entity tables
written in a tiny DSL. Themes for description-only sources (and the project's own catalog) are
composed from it; the tool-schema path borrows its fields to flesh out inferred entities.

DSL, one table per line::

    stocks < companies: symbol:ticker exchange=NYSE/NASDAQ price volume

`< parent` adds a foreign key to the parent table; `field:gen` picks a generator (see FIELD_GENS),
`field=a/b/c` makes a choice column (underscores become spaces); a bare field name is typed by
`infer.column_for` from its name. The primary key `<singular>_id` is added automatically.
"""

from __future__ import annotations

from dataclasses import dataclass

# code -> (L3 labels separated by "|", table lines)
LIBRARY: dict[str, tuple[str, str]] = {
    "L2-01": ("web search console|site index explorer|query analytics desk|search result curator|domain lookup service", """
sites: domain:domain title:title language=en/de/fr/es/ja rank:int_rank category=news/shop/blog/forum/reference
pages < sites: url title:title word_count published_on status=indexed/pending/blocked
queries: text:phrase locale=en-US/en-GB/de-DE/fr-FR results_count searched_at
results < queries: page_url:url position:int_rank snippet:sentence clicks
"""),
    "L2-02": ("web scraper|article extractor|sitemap crawler|metadata harvester|page snapshot archive", """
crawls: seed_url:url started_at status=queued/running/finished/failed depth:small_int pages_found
documents < crawls: url title:title language=en/de/fr/es content_length fetched_at status=ok/redirect/error
links < documents: target_url:url anchor:phrase rel=follow/nofollow/sponsored
extractions < documents: field=title/price/author/date/image value:phrase confidence:ratio
"""),
    "L2-03": ("api gateway|endpoint catalog|rate limit manager|webhook relay|api key console", """
apis: name:title base_url:url version=v1/v2/v3 owner:person status=live/deprecated/beta
endpoints < apis: path:path method=GET/POST/PUT/DELETE latency_ms:int_ms rate_limit
api_keys < apis: label:phrase holder:email created_at status=active/revoked/expired quota
requests < endpoints: status_code=200/201/400/404/429/500 duration_ms:int_ms requested_at client_ip:ip
"""),
    "L2-04": ("paper finder|preprint tracker|reading list manager|journal browser|conference proceedings index", """
authors: name:person affiliation:company country h_index:small_int email
papers < authors: title:title venue=NeurIPS/ICML/ACL/Nature/Science/arXiv year:year citations abstract_length status=published/preprint/retracted
reading_lists: name:phrase owner:person created_at visibility=private/shared/public
venues: name:title field=ml/nlp/biology/physics/economics impact_factor:ratio country
"""),
    "L2-05": ("citation analytics|h-index tracker|co-author network|grant portfolio|peer review desk", """
researchers: name:person institution:company field=physics/biology/cs/chemistry/medicine h_index:small_int orcid:code
publications < researchers: title:title year:year citations journal:title open_access=yes/no
citations < publications: citing_title:title year:year context=method/background/result
grants < researchers: agency=NSF/NIH/ERC/DFG amount:money start_date end_date status=active/closed/pending
"""),
    "L2-06": ("social feed manager|community forum|follower analytics|group moderator|profile directory", """
users: handle:username name:person email city joined_at followers verified:flag
posts < users: text:sentence likes shares posted_at visibility=public/friends/private
comments < posts: text:sentence likes posted_at status=visible/hidden/flagged
groups: name:title topic=sports/tech/travel/food/music members created_at
"""),
    "L2-07": ("video channel studio|playlist manager|creator analytics|live stream scheduler|podcast host", """
channels: name:title owner:person subscribers category=gaming/music/education/vlog/news created_at
videos < channels: title:title duration_sec views likes published_on status=public/unlisted/private
playlists < channels: name:phrase items:small_int visibility=public/private
streams < channels: title:title scheduled_at viewers status=scheduled/live/ended
"""),
    "L2-08": ("stock screener|earnings calendar|dividend tracker|insider trade monitor|ipo watchlist|equity research desk", """
companies: name:company sector=technology/energy/healthcare/financials/industrials country ceo:person employees founded:year
stocks < companies: symbol:ticker exchange=NYSE/NASDAQ/LSE/TSE price volume market_cap pe_ratio:ratio
quotes < stocks: trade_date:date open_price:price close_price:price high:price low:price volume
earnings < companies: quarter=Q1/Q2/Q3/Q4 revenue eps:small_money report_date status=reported/scheduled/delayed
"""),
    "L2-09": ("fx rate board|currency converter desk|remittance service|forex order book|travel money wallet", """
currencies: code:currency name:title country symbol:phrase active:flag
rates < currencies: quote_currency:currency rate:ratio as_of:date source=ecb/fed/market
conversions < currencies: amount target_currency:currency converted_amount:money converted_at
fx_orders < currencies: side=buy/sell amount limit_rate:ratio status=open/filled/cancelled placed_at
"""),
    "L2-10": ("portfolio tracker|budget planner|expense ledger|loan calculator desk|invoice manager", """
portfolios: name:phrase owner:person risk=low/medium/high base_currency:currency created_at
holdings < portfolios: symbol:ticker quantity cost_basis:price current_price:price
budgets: name:phrase month:month limit_amount:money spent:money owner:person
expenses < budgets: description:phrase amount category=food/rent/travel/utilities/health spent_on status=cleared/pending
"""),
    "L2-11": ("coin price tracker|token screener|exchange volume monitor|crypto watchlist|market cap ranking", """
coins: symbol:ticker name:title market_cap price volume_24h change_24h:pct rank:int_rank
exchanges: name:company country volume_24h trust_score:small_int status=active/paused
markets < coins: pair:code price volume_24h spread:ratio
alerts < coins: threshold:price direction=above/below status=armed/triggered/disabled created_at
"""),
    "L2-12": ("dex aggregator|liquidity pool explorer|yield farm monitor|lending protocol desk|swap router", """
pools: pair:code protocol=uniswap/curve/balancer/sushiswap tvl:money fee_tier:ratio apr:pct
swaps < pools: trader:wallet amount_in:money amount_out:money executed_at status=settled/reverted/pending
positions < pools: owner:wallet liquidity:money opened_at status=open/closed
loans: borrower:wallet asset:ticker principal:money interest_rate:pct health_factor:ratio status=active/repaid/liquidated
"""),
    "L2-13": ("wallet manager|block explorer|node monitor|nft registry|smart contract inspector", """
wallets: address:wallet label:phrase chain=ethereum/polygon/solana/bitcoin balance:money created_at
transactions < wallets: hash:hash amount:money fee:small_money block_number:big_int status=confirmed/pending/failed
contracts: address:wallet name:title chain=ethereum/polygon/arbitrum verified:flag deployed_on
nfts < wallets: token_name:title collection:title minted_on last_price:money
"""),
    "L2-14": ("weather forecast desk|severe weather alerts|city climate board|agricultural weather service|marine forecast", """
stations: name:title city country latitude:lat longitude:lon elevation
forecasts < stations: forecast_date:date temp_high:temp temp_low:temp precipitation:pct condition=sunny/cloudy/rain/snow/storm wind_speed:small_int
observations < stations: observed_at temperature:temp humidity:pct pressure:pressure condition=sunny/cloudy/rain/snow/fog
warnings < stations: type=heat/flood/wind/frost/storm severity=minor/moderate/severe issued_at status=active/expired/cancelled
"""),
    "L2-15": ("place finder|route planner|geocoding service|store locator|delivery zone map", """
places: name:company category=restaurant/museum/park/hotel/shop address:street city latitude:lat longitude:lon rating:rating
routes: origin:city destination:city distance_km:distance duration_min:int_ms mode=driving/walking/cycling/transit
reviews < places: author:person rating:rating text:sentence posted_at
zones: name:phrase city radius_km:distance active:flag
"""),
    "L2-16": ("air quality monitor|earthquake feed|river gauge network|wildfire tracker|emissions registry", """
sensors: name:code site:city kind=air/water/soil/seismic installed_on status=online/offline/maintenance
readings < sensors: measured_at value:ratio unit=ppm/ugm3/mm/celsius quality=good/moderate/poor
events: kind=earthquake/flood/wildfire/storm magnitude:ratio region:city occurred_on severity=low/medium/high
facilities: name:company sector=energy/cement/steel/chemicals emissions_t:money country
"""),
    "L2-17": ("code runner|static analysis console|notebook service|snippet library|test coverage board", """
projects: name:slug language=python/javascript/go/rust/java owner:person created_at stars
runs < projects: started_at duration_ms:int_ms exit_code=0/1/2/137 status=passed/failed/timeout
findings < projects: file:path line:small_int severity=info/warning/error rule:code status=open/fixed/ignored
snippets: title:phrase language=python/javascript/sql/bash lines:small_int author:person
"""),
    "L2-18": ("package registry browser|dependency auditor|release tracker|license checker|lockfile inspector", """
packages: name:slug ecosystem=pypi/npm/cargo/maven latest_version:version downloads license=MIT/Apache-2.0/GPL-3.0/BSD-3-Clause
releases < packages: version:version released_on yanked:flag size_kb
dependencies < packages: depends_on:slug constraint:version kind=runtime/dev/optional
advisories < packages: severity=low/moderate/high/critical published_on status=open/patched/withdrawn
"""),
    "L2-19": ("component library|framework docs browser|ui kit catalog|plugin marketplace|template gallery", """
frameworks: name:slug language=javascript/python/dart/swift version:version stars license=MIT/Apache-2.0
components < frameworks: name:title category=form/layout/chart/navigation/media props:small_int status=stable/beta/deprecated
plugins < frameworks: name:slug author:person downloads rating:rating
examples < components: title:phrase lines:small_int updated_on
"""),
    "L2-20": ("shell session manager|file system browser|process monitor|cron job desk|command history", """
directories: path:path owner:username permissions=755/700/644 created_at
files < directories: name:filename size_kb modified_at kind=text/binary/image/archive
processes: command:phrase user:username cpu:pct memory_mb started_at status=running/sleeping/stopped
jobs: schedule=hourly/daily/weekly/monthly command:phrase last_run status=enabled/disabled/failed
"""),
    "L2-21": ("cloud resource console|storage bucket manager|vm fleet|serverless functions desk|cost explorer", """
projects: name:slug region=us-east-1/eu-west-1/ap-south-1 owner:email budget:money created_at
instances < projects: name:slug type=t3.micro/m5.large/c6.xlarge state=running/stopped/terminated launched_at cost_per_hour:small_money
buckets < projects: name:slug size_gb objects visibility=private/public
functions < projects: name:slug runtime=python3.12/node20/go1.22 memory_mb invocations status=active/disabled
"""),
    "L2-22": ("ci pipeline board|deployment tracker|incident desk|release manager|workflow scheduler", """
repositories: name:slug owner:username default_branch=main/master/develop stars
pipelines < repositories: branch:slug trigger=push/schedule/manual duration_sec status=success/failed/running/cancelled started_at
deployments < repositories: environment=staging/production/dev version:version deployed_at status=live/rolled_back/failed
incidents: title:phrase severity=sev1/sev2/sev3 opened_at assignee:person status=open/mitigated/resolved
"""),
    "L2-23": ("browser tab manager|bookmark organizer|form filler|download manager|session recorder", """
sessions: name:phrase browser=chrome/firefox/safari/edge started_at status=active/closed
tabs < sessions: url title:title opened_at pinned:flag
bookmarks: url title:title folder=work/personal/reading/shopping added_on visits
downloads < sessions: filename:filename size_kb status=complete/paused/failed started_at
"""),
    "L2-24": ("test suite dashboard|bug tracker|visual regression board|accessibility audit|release qa checklist", """
suites: name:phrase app:slug framework=playwright/selenium/cypress owner:person
test_cases < suites: title:phrase priority=p1/p2/p3 status=passing/failing/skipped last_run duration_ms:int_ms
bugs < suites: title:phrase severity=minor/major/critical reporter:person status=open/in_progress/closed opened_at
audits: page_url:url score:small_int issues:small_int audited_on
"""),
    "L2-25": ("sql workbench|schema browser|query history|backup manager|migration tracker", """
databases: name:slug engine=postgres/mysql/sqlite/sqlserver size_mb owner:person created_at
tables < databases: name:slug rows_count columns:small_int last_analyzed
saved_queries < databases: title:phrase author:person runtime_ms:int_ms created_at
backups < databases: taken_at size_mb status=complete/failed/running retention_days:small_int
"""),
    "L2-26": ("document store console|key value cache|collection browser|index advisor|replica monitor", """
collections: name:slug documents size_mb shard_key:slug created_at
documents < collections: key:code version:small_int size_kb updated_at status=live/archived
indexes < collections: field:slug kind=single/compound/text/geo unique:flag
replicas < collections: node:slug lag_ms:int_ms status=healthy/lagging/down
"""),
    "L2-27": ("knowledge base|note vault|memory graph|wiki workspace|flashcard deck", """
notebooks: name:phrase owner:person created_at shared:flag
notes < notebooks: title:phrase word_count tag=idea/todo/reference/meeting updated_at pinned:flag
entities: name:title kind=person/place/org/concept mentions created_at
relations < entities: predicate=knows/part_of/located_in/related_to target:title weight:ratio
"""),
    "L2-28": ("model hub browser|llm endpoint console|prompt library|fine-tune job tracker|inference usage board", """
models: name:slug provider=openai/meta/mistral/google/anthropic parameters_b:small_int context_length downloads license=MIT/Apache-2.0/custom
endpoints < models: region=us/eu/asia replicas:small_int price_per_1k:small_money status=online/offline/scaling
prompts: title:phrase author:person tokens uses created_at
finetunes < models: dataset:slug epochs:small_int status=queued/running/succeeded/failed started_at cost:money
"""),
    "L2-29": ("image generator studio|asset library|style preset manager|upscaler queue|thumbnail factory", """
projects: name:phrase owner:person created_at plan=free/pro/team
images < projects: prompt:phrase width:pixels height:pixels style=photo/anime/oil/sketch/3d created_at status=ready/failed/queued
presets: name:phrase style=photo/anime/oil/sketch/3d steps:small_int guidance:ratio
jobs < images: kind=upscale/variation/inpaint status=queued/running/done/failed cost:small_money
"""),
    "L2-30": ("agent orchestrator|task queue|crew planner|tool router|multi-agent chat room", """
agents: name:slug role=planner/coder/researcher/critic model:slug status=idle/busy/offline
tasks < agents: goal:phrase priority=low/medium/high status=pending/running/done/failed created_at tokens
messages < tasks: sender:slug content:sentence sent_at
workflows: name:phrase steps:small_int owner:person status=draft/active/archived
"""),
    "L2-31": ("goal planner|okr tracker|project roadmap|habit tracker|decision journal", """
goals: title:phrase owner:person due_date status=not_started/in_progress/done priority=low/medium/high
milestones < goals: title:phrase due_date progress:pct status=open/done
steps < milestones: description:phrase estimate_hours:small_int done:flag
habits: name:phrase frequency=daily/weekly streak:small_int owner:person
"""),
    "L2-32": ("debate organizer|decision matrix|pros and cons board|argument map|vote tally", """
decisions: title:phrase owner:person deadline status=open/decided/withdrawn
options < decisions: name:phrase score:small_int cost:money risk=low/medium/high
criteria < decisions: name:phrase weight:ratio
arguments < options: stance=pro/con claim:sentence strength:small_int author:person
"""),
    "L2-33": ("calculator workspace|unit converter|invoice math desk|tip and split service|statistics notebook", """
worksheets: title:phrase owner:person created_at precision:small_int
calculations < worksheets: expression:code result:ratio evaluated_at status=ok/error
conversions: quantity:ratio from_unit=m/km/mi/ft/kg/lb to_unit=m/km/mi/ft/kg/lb result:ratio
datasets: name:phrase size:small_int mean:ratio median:ratio stdev:ratio
"""),
    "L2-34": ("symbolic algebra notebook|physics constants table|simulation runner|matrix lab|equation solver", """
problems: title:phrase field=algebra/calculus/physics/statistics difficulty=easy/medium/hard created_at
solutions < problems: method=analytic/numeric/symbolic result:ratio steps:small_int verified:flag
constants: name:title symbol:code value:ratio unit=m/s/kg/J/K
simulations < problems: iterations tolerance:ratio runtime_ms:int_ms status=converged/diverged/running
"""),
    "L2-35": ("video transcoder|podcast editor|subtitle studio|audio library|media asset manager", """
media: title:title kind=video/audio duration_sec format=mp4/mov/mp3/wav size_mb uploaded_at
renditions < media: resolution=480p/720p/1080p/4k bitrate_kbps status=ready/processing/failed
subtitles < media: language=en/es/fr/de/ja lines word_errors:small_int
playlists: name:phrase owner:person items:small_int public:flag
"""),
    "L2-36": ("game leaderboard|tournament organizer|player inventory|quest tracker|match history", """
players: username:username country level:small_int xp joined_at status=active/banned/inactive
matches: mode=ranked/casual/tournament map:title duration_sec played_at
scores < players: points placement:small_int recorded_at
items < players: name:title rarity=common/rare/epic/legendary price:small_money equipped:flag
"""),
    "L2-37": ("museum collection explorer|gallery exhibition planner|artist archive|concert guide|heritage site registry", """
artists: name:person nationality:country born:year movement=impressionism/cubism/baroque/modern/renaissance
artworks < artists: title:title year:year medium=oil/watercolor/bronze/marble/photo value:money on_display:flag
exhibitions: title:title gallery:company opens_on closes_on visitors
loans < artworks: borrower:company starts_on ends_on status=requested/approved/returned
"""),
    "L2-38": ("clinic scheduler|patient records desk|pharmacy refill service|lab results portal|symptom triage", """
patients: name:person birth_date email phone insurance=medicare/aetna/cigna/none city
doctors: name:person specialty=cardiology/pediatrics/dermatology/neurology/general clinic:company
appointments < patients: scheduled_for status=scheduled/completed/cancelled reason=checkup/follow_up/vaccination/consult
prescriptions < patients: drug:drug dose_mg:small_int refills:small_int status=active/expired/cancelled issued_on
"""),
    "L2-39": ("compound database|gene explorer|protein browser|lab inventory|assay tracker", """
compounds: name:drug formula:code molecular_weight:ratio solubility=high/medium/low cas_number:code
genes: symbol:code chromosome=1/2/3/7/11/17/X length_bp organism=human/mouse/yeast/zebrafish
assays < compounds: target:code ic50_nm:ratio run_on status=valid/invalid/pending
samples < genes: tissue=liver/brain/blood/lung expression:ratio collected_on
"""),
    "L2-40": ("hotel booking desk|vacation rental service|restaurant reservations|event tickets office|flight booking desk", """
hotels: name:company city stars:stars price_per_night:price rooms_total
guests: name:person email phone loyalty=none/silver/gold
bookings < hotels: guest_email:email check_in check_out nights:small_int total:money status=confirmed/cancelled/pending
payments < bookings: amount method=card/paypal/voucher paid_at status=paid/refunded
"""),
    "L2-41": ("transit planner|fleet tracker|ride hailing desk|parking finder|ev charging network", """
routes: name:code mode=bus/tram/metro/train origin:city destination:city stops:small_int
vehicles < routes: plate:code model:title capacity status=in_service/maintenance/retired
trips < vehicles: departs_at arrives_at passengers delay_min:small_int status=on_time/delayed/cancelled
stations: name:title city chargers:small_int available:small_int
"""),
    "L2-42": ("document editor|spreadsheet manager|pdf toolkit|contract library|translation memory", """
documents: title:phrase owner:person pages:small_int format=docx/pdf/md/odt updated_at status=draft/final/archived
revisions < documents: author:person summary:phrase words created_at
comments < documents: author:person text:sentence resolved:flag created_at
templates: name:phrase category=letter/report/invoice/contract uses
"""),
    "L2-43": ("design system manager|chart builder|color palette studio|icon library|wireframe board", """
projects: name:phrase client:company owner:person status=active/paused/done created_at
artboards < projects: name:phrase width:pixels height:pixels updated_at
palettes: name:phrase primary:color secondary:color accent:color
charts < projects: title:phrase kind=bar/line/pie/scatter series:small_int
"""),
    "L2-44": ("news reader|rss aggregator|headline digest|press release wire|topic feed curator", """
sources: name:company country language=en/de/fr/es bias=left/center/right reliability:small_int
articles < sources: headline:title author:person published_at section=world/business/tech/sports/science words
feeds: name:phrase url refresh_min:small_int status=active/paused
bookmarks < articles: reader:email saved_at read:flag
"""),
    "L2-45": ("trend dashboard|keyword monitor|brand mention tracker|hashtag analytics|market pulse board", """
keywords: term:phrase region=US/UK/DE/JP/BR volume growth:pct category=tech/fashion/food/politics/sports
mentions < keywords: channel=twitter/reddit/news/blog sentiment=positive/neutral/negative reach posted_at
reports: title:phrase period=daily/weekly/monthly created_at owner:person
alerts < keywords: threshold direction=up/down status=armed/fired/muted
"""),
    "L2-46": ("vulnerability scanner|pentest engagement log|exploit database|attack surface mapper|red team planner", """
targets: host:domain ip:ip owner:company environment=prod/staging/dev status=in_scope/out_of_scope
scans < targets: tool=nmap/nessus/zap/nikto started_at findings_count:small_int status=complete/running/failed
vulnerabilities < targets: cve:cve severity=low/medium/high/critical cvss:cvss status=open/fixed/accepted found_on
engagements: client:company lead:person starts_on ends_on status=planned/active/closed
"""),
    "L2-47": ("network traffic monitor|threat intel feed|firewall rule manager|dns watch|intrusion alert desk", """
hosts: hostname:domain ip:ip site:city os=linux/windows/macos status=up/down
alerts < hosts: signature:phrase severity=low/medium/high/critical raised_at status=new/triaged/closed
indicators: value:ip kind=ip/domain/hash/url confidence:small_int first_seen source=osint/vendor/internal
rules: name:phrase action=allow/deny/log port:port protocol=tcp/udp/icmp hits
"""),
    "L2-48": ("team messenger|email outbox|sms notification service|push alert console|mailing list manager", """
contacts: name:person email phone company:company
channels: name:slug topic:phrase members private:flag
messages < channels: sender:email text:sentence sent_at status=sent/delivered/read/failed
campaigns: subject:phrase audience:small_int scheduled_at status=draft/scheduled/sent/cancelled open_rate:pct
"""),
    "L2-49": ("calendar assistant|meeting scheduler|time zone planner|shift roster|reminder service", """
calendars: name:phrase owner:person timezone=UTC/America_New_York/Europe_Berlin/Asia_Tokyo color:color
events < calendars: title:phrase starts_at ends_at location:city status=confirmed/tentative/cancelled
attendees < events: email response=accepted/declined/pending
reminders < events: minutes_before:small_int channel=email/push/sms status=pending/sent
"""),
    "L2-50": ("course catalog|dictionary service|recipe box|library loans desk|fitness coach", """
courses: title:title subject=math/history/language/science/art level=beginner/intermediate/advanced price:price seats
students: name:person email grade:small_int city
enrollments < courses: student_email:email enrolled_on progress:pct status=active/completed/dropped
lessons < courses: title:phrase duration_min:int_ms position:small_int
"""),
}

# Extra tables and columns the complexifier may add to any theme (generic but still typed).
EXTRA_TABLES = (
    "notes < {parent}: author:person text:sentence created_at pinned:flag",
    "tags < {parent}: label=urgent/review/archive/favorite/blocked added_on",
    "audit_events < {parent}: actor:email action=create/update/delete/view occurred_at",
    "attachments < {parent}: filename:filename size_kb uploaded_at",
    "ratings < {parent}: reviewer:person stars:stars comment:sentence rated_on",
    "assignments < {parent}: assignee:person role=owner/reviewer/watcher assigned_on status=active/ended",
)
EXTRA_COLUMNS = (
    "priority=low/normal/high", "region=north/south/east/west", "owner:person", "updated_at", "rating:rating",
    "notes:sentence", "score:small_int", "archived:flag", "reference:code", "cost:money", "tier=basic/plus/premium",
    "contact:email", "quantity", "source=web/app/partner/import",
)


@dataclass(frozen=True)
class TableDef:
    name: str
    parent: str | None
    fields: tuple[str, ...]  # DSL tokens


def parse_line(line: str) -> TableDef:
    head, _, body = line.partition(":")
    name, _, parent = head.partition("<")
    return TableDef(name.strip(), parent.strip() or None, tuple(body.split()))


def tables_of(code: str) -> list[TableDef]:
    return [parse_line(line) for line in LIBRARY[code][1].strip().splitlines() if line.strip()]


def labels_of(code: str) -> list[str]:
    return LIBRARY[code][0].split("|")
