"""Domain entities for the composed catalog: a library of entity tables (realistic columns typed by
meaning, foreign keys to the entities they belong to, words that call for them), and the planner that
composes each catalog theme from the entities a real MCP server's name and description call for.

DSL, one entity per line (the archetype DSL of `archetypes`, plus parents and words)::

    pull_requests < repositories ~ pr merge review: title:title author:username state=open/merged/closed ...

`< a/b` lists the tables the entity can belong to (the first one present in a theme gets the foreign
key); `~ words` are extra words that call for it (its own name's singular and plural always do).
The archetype library's tables are entities too (called for by their own names).

The planner (`plan_catalog`) keeps a theme only when its {table.column} set overlaps every theme
already in the pool by less than `MAX_OVERLAP` (Jaccard, the measure of bench_pool_quality.py), trying
smaller or other combinations of the called-for entities before giving a server up.
"""

from __future__ import annotations

import itertools
import json
import re
from dataclasses import dataclass
from pathlib import Path

from . import archetypes
from .infer import TableDraft, ThemeDraft, _gen_from_name, fk_column, key_column, parse_field, pk_name, singular, slugify, stable_seed

# The facts of real MCP server profiles the catalog is planned from (TensorBlock/awesome-mcp-servers,
# MIT; see envs/data/TENSORBLOCK_SOURCE.md): id, name, first sentence of the description, category.
# Derived once from the full catalogue with `python -m agentworld_gym.discovery.pool --profiles SRC`.
PROFILES = Path(__file__).resolve().parents[2] / "envs" / "data" / "tensorblock_profiles.jsonl.gz"
ABOUT_CAP = 200  # characters of a server's own description kept as the theme's "about"

ENTITY_LINES = """
repositories ~ repo github gitlab codebase git: name:slug owner:username language=python/javascript/go/rust/java/typescript stars forks default_branch=main/master/develop visibility=public/private created_at
issues < repositories/projects ~ bug ticket: title:title reporter:username labels=bug/feature/docs/question state=open/closed/triaged comments_count opened_at
pull_requests < repositories ~ pr merge review: title:title author:username source_branch:slug state=open/merged/closed additions deletions opened_at
commits < repositories ~ commit git history: sha:hash author:person message:sentence files_changed:small_int committed_at
branches < repositories ~ branch: name:slug protected:flag ahead:small_int behind:small_int updated_at
code_reviews < pull_requests ~ review reviewer approve: reviewer:username verdict=approved/changes_requested/commented submitted_at comments_count
workflow_runs < repositories ~ ci github-actions: workflow:slug trigger=push/pull_request/schedule/manual conclusion=success/failure/cancelled duration_sec started_at
conversations ~ chat conversation dialogue thread chatbot assistant: title:phrase model:slug user:username message_count started_at status=open/archived
chat_messages < conversations ~ message chat reply: role=user/assistant/system content:sentence tokens sent_at
llm_models ~ model llm gpt claude gemini openai anthropic ollama mistral: name:slug provider=openai/anthropic/google/meta/mistral context_window max_output_tokens input_price:small_money output_price:small_money status=available/deprecated
completions < llm_models ~ completion inference: prompt:phrase output_tokens latency_ms:int_ms cost:small_money requested_at status=ok/error/filtered
embeddings < documents/knowledge_chunks ~ embedding vector semantic similarity: model:slug dimensions=384/768/1024/1536/3072 norm:ratio created_at
knowledge_chunks < documents/sources ~ chunk rag retrieval passage: position:small_int text:sentence tokens relevance:ratio
vector_collections ~ vector qdrant pinecone weaviate chroma milvus index: name:slug dimensions=384/768/1024/1536 metric=cosine/dot/euclidean vectors created_at
api_keys ~ key credential token auth: label:phrase holder:email scopes=read/write/admin created_at expires_on status=active/revoked/expired
usage_records < api_keys ~ usage billing quota consumption metering: period:month requests tokens cost:money status=open/invoiced
prompt_templates ~ prompt template: name:phrase author:person variables:small_int tokens uses version:version updated_at
agent_runs ~ agent autonomous orchestration crew run: agent:slug goal:phrase steps:small_int tokens status=queued/running/succeeded/failed started_at
tool_calls < agent_runs ~ tool call function invoke: tool:slug arguments_size:small_int duration_ms:int_ms outcome=ok/error/timeout called_at
memories ~ memory remember recall persistent context long-term: content:sentence kind=fact/preference/event/instruction importance:small_int created_at last_recalled_at
knowledge_entities ~ graph entity knowledge node ontology: name:title kind=person/organization/place/concept/event mentions created_at
knowledge_relations < knowledge_entities ~ relation triple edge: predicate=works_for/part_of/located_in/related_to/depends_on target:title confidence:ratio
notes ~ note notebook obsidian markdown jot: title:phrase body_words tag=idea/todo/reference/meeting pinned:flag created_at updated_at
bookmarks ~ bookmark save link read-later pocket raindrop: url title:title folder=work/reading/research/shopping added_on visits
documents ~ document doc docx pdf: title:phrase author:person pages:small_int format=pdf/docx/md/html size_kb uploaded_at status=draft/final/archived
sources ~ source corpus crawl ingest: name:title kind=website/pdf/api/database url items_synced last_synced_at status=healthy/failing/paused
spreadsheets ~ spreadsheet sheet excel google csv workbook: title:phrase owner:email sheets:small_int rows_count updated_at
sheet_ranges < spreadsheets ~ range cell formula: a1_range:code values_count formula_count:small_int updated_at
wiki_pages ~ wiki confluence notion page knowledge base: title:title space:slug author:person words version:small_int updated_at status=published/draft
tasks < projects/task_lists ~ task todo to-do assignment: title:phrase assignee:person priority=low/medium/high/urgent status=todo/in_progress/blocked/done due_date estimate_hours:small_int
projects ~ project workspace initiative: name:title owner:person status=active/on_hold/completed start_date end_date budget:money
task_lists ~ list todoist ticktick checklist: name:phrase owner:person items:small_int shared:flag created_at
sprints < projects ~ sprint agile scrum iteration jira linear: name:phrase starts_on ends_on goal:phrase velocity:small_int status=planned/active/closed
time_entries < tasks ~ time tracking timesheet hours clockify toggl: person:person minutes:int_ms billable:flag logged_on note:phrase
emails < mailboxes ~ email mail gmail outlook inbox smtp imap: subject:phrase sender:email recipient:email received_at size_kb read:flag folder=inbox/sent/archive/spam
mailboxes ~ mailbox inbox account: address:email provider=gmail/outlook/fastmail/proton unread:small_int storage_mb created_at
contacts ~ contact addressbook: name:person email phone company:company city tags=lead/customer/partner/vendor created_at
calendar_events < calendars ~ calendar event meeting appointment schedule: title:phrase starts_at ends_at location:city organizer:email status=confirmed/tentative/cancelled
calendars ~ calendar: name:phrase owner:person timezone=UTC/America_New_York/Europe_London/Asia_Tokyo color:color
chat_channels ~ slack discord teams channel workspace server: name:slug topic:phrase members private:flag created_at
channel_posts < chat_channels ~ post message announcement: author:username text:sentence reactions:small_int posted_at pinned:flag
sms_messages ~ sms text twilio whatsapp telegram phone: to_number:phone body:sentence segments:small_int sent_at status=queued/sent/delivered/failed
notifications ~ notification push alert notify ntfy pushover: title:phrase channel=email/push/sms/webhook recipient:email sent_at status=pending/sent/failed
webhooks ~ webhook callback event subscription: target_url:url event=created/updated/deleted/payment secret_hint:code deliveries failures:small_int status=active/disabled
customers ~ customer client shopper buyer: name:person email country lifetime_value:money segment=retail/smb/enterprise joined_on
invoices < customers ~ invoice bill billing receivable: number:code amount:money currency:currency issued_on due_on status=draft/sent/paid/overdue/void
payments < invoices/customers/orders ~ payment stripe paypal charge checkout: amount:money method=card/bank_transfer/paypal/wallet paid_at status=succeeded/pending/refunded/failed
subscriptions < customers ~ subscription plan recurring saas: plan=free/starter/pro/enterprise seats:small_int monthly_price:price started_on renews_on status=active/past_due/cancelled
products ~ product catalog shopify sku item merchandise: name:title sku:code price:price stock category=apparel/electronics/home/beauty/sports active:flag
orders < customers ~ order purchase ecommerce shop store cart: order_number:code total:money items:small_int placed_at status=pending/paid/shipped/delivered/cancelled
order_items < orders ~ line: product:title quantity:small_int unit_price:price discount:pct
shipments < orders ~ shipment shipping delivery tracking parcel courier: carrier=ups/fedex/dhl/usps tracking_number:code shipped_on delivered_on status=label_created/in_transit/delivered/returned
leads ~ lead prospect crm hubspot salesforce pipedrive: name:person company:company email source=web/referral/event/ads score:small_int status=new/contacted/qualified/lost created_at
deals < accounts ~ deal opportunity sales pipeline: title:phrase amount:money stage=prospecting/proposal/negotiation/won/lost close_date owner:person probability:pct
accounts ~ crm organization: name:company industry=software/retail/finance/health/manufacturing employees annual_revenue:money country owner:person
campaigns ~ campaign marketing newsletter mailchimp ads advertising: name:phrase channel=email/social/search/display budget:money starts_on ends_on status=draft/running/paused/finished
ad_groups < campaigns ~ ad adwords keyword bid: name:phrase max_cpc:small_money impressions clicks conversions status=enabled/paused
social_posts < social_accounts ~ tweet twitter bluesky mastodon linkedin instagram facebook threads: text:sentence likes reposts replies posted_at visibility=public/followers/private
social_accounts ~ profile handle account influencer: handle:username platform=x/bluesky/mastodon/instagram/linkedin followers following verified:flag joined_at
videos < video_channels ~ video youtube tiktok vimeo clip: title:title duration_sec views likes published_on status=public/unlisted/private
video_channels ~ youtube channel creator streamer twitch: name:title owner:person subscribers category=gaming/music/education/vlog/news created_at
transcripts < videos/audio_tracks/meetings ~ transcript transcribe subtitle caption whisper speech: language=en/es/fr/de/ja words confidence:ratio created_at
audio_tracks ~ audio podcast music song track spotify sound tts: title:title artist:person duration_sec bpm:small_int genre=pop/rock/jazz/classical/electronic released_on
playlists ~ playlist queue: name:phrase owner:person tracks:small_int public:flag updated_at
images ~ image photo picture png jpeg stable diffusion dall-e midjourney: prompt:phrase width:pixels height:pixels format=png/jpeg/webp size_kb created_at status=ready/queued/failed
meetings ~ meeting zoom call standup minutes: title:phrase host:person starts_at duration_min:int_ms attendees:small_int recording:flag
files ~ file filesystem folder storage upload drive dropbox: name:filename path size_kb mime=text/plain/application/pdf/image/png modified_at owner:username
folders ~ folder directory: path owner:username items:small_int shared:flag created_at
buckets ~ bucket s3 object storage r2 blob gcs: name:slug region=us-east-1/eu-west-1/ap-southeast-2 objects size_gb versioning:flag public:flag
storage_objects < buckets ~ object blob key: key:path size_kb content_type=text/html/image/png/application/json etag:hash uploaded_at
virtual_machines ~ vm instance ec2 compute server droplet: name:slug size=small/medium/large/xlarge region=us-east/eu-west/ap-south state=running/stopped/terminated launched_at hourly_cost:small_money
k8s_clusters ~ kubernetes k8s cluster eks gke aks helm: name:slug version:version nodes:small_int region=us-east/eu-west/ap-south status=healthy/degraded/provisioning
pods < k8s_clusters ~ pod container workload namespace: name:slug namespace:slug restarts:small_int cpu_millicores memory_mb phase=running/pending/failed/succeeded started_at
containers ~ docker container podman: name:slug image:slug state=running/exited/paused cpu_pct:pct memory_mb ports:port created_at
dns_records < domains ~ dns record cname mx: name:slug type=A/AAAA/CNAME/MX/TXT value:phrase ttl proxied:flag
domains ~ domain registrar whois namecheap cloudflare: name:domain registrar:company expires_on auto_renew:flag status=active/expired/pending_transfer
certificates < domains ~ certificate ssl tls https: issuer=letsencrypt/digicert/sectigo issued_on expires_on key_type=rsa/ecdsa status=valid/expiring/revoked
serverless_functions ~ lambda function serverless worker edge: name:slug runtime=node20/python3.12/go1.22 memory_mb timeout_sec:small_int invocations errors:small_int status=active/disabled
log_entries < services ~ log logs logging loki elasticsearch splunk: level=debug/info/warn/error message:sentence source:slug logged_at
services ~ service microservice endpoint app: name:slug team:slug language=go/java/python/node tier=critical/standard/experimental status=up/degraded/down
metrics < services ~ metric prometheus grafana datadog observability monitoring: name:slug value:ratio unit=ms/percent/count/bytes recorded_at
incidents < services ~ incident outage pagerduty opsgenie on-call: title:phrase severity=sev1/sev2/sev3/sev4 opened_at resolved_at commander:person status=open/mitigated/resolved
traces < services ~ trace span tracing opentelemetry latency: operation:slug duration_ms:int_ms spans:small_int status=ok/error started_at
builds < repositories/projects ~ build compile artifact jenkins: number:big_int branch:slug duration_sec status=success/failed/running/cancelled started_at
deployments < services/repositories ~ deploy deployment release rollout vercel netlify heroku: environment=dev/staging/production version:version deployed_at deployed_by:person status=live/rolled_back/failed
db_connections ~ database postgres postgresql mysql sqlite supabase connection: name:slug engine=postgres/mysql/sqlite/mssql host:domain port:port database:slug ssl:flag created_at
db_tables < db_connections ~ table schema column: name:slug rows_count columns:small_int size_mb last_vacuumed_at
sql_queries < db_connections ~ sql query select statement: text:sentence runtime_ms:int_ms rows_returned author:username ran_at status=ok/error/cancelled
datasets ~ dataset data csv kaggle huggingface parquet: name:slug rows_count columns:small_int size_mb license=CC-BY/MIT/Apache-2.0/proprietary updated_at
dashboards ~ dashboard bi analytics looker tableau metabase power: title:phrase owner:person widgets:small_int views refreshed_at shared:flag
reports ~ report reporting: title:phrase author:person period=daily/weekly/monthly/quarterly pages:small_int created_at status=draft/published
charts < dashboards/reports ~ chart plot graph visualization: title:phrase kind=bar/line/pie/scatter/area series:small_int data_points updated_at
web_pages < websites ~ page webpage html scrape scraping extract crawler: url title:title word_count status_code=200/301/404/500 fetched_at
websites ~ website site web seo: domain:domain title:title pages_indexed domain_authority:small_int last_crawled_at
screenshots < web_pages/browser_sessions ~ screenshot capture snapshot: width:pixels height:pixels format=png/jpeg size_kb taken_at
browser_sessions ~ browser playwright puppeteer selenium chrome headless automation: browser=chromium/firefox/webkit viewport:pixels started_at pages_visited:small_int status=active/closed/crashed
search_queries ~ search query google bing duckduckgo brave serp: text:phrase engine=google/bing/duckduckgo/brave results_count searched_at locale=en-US/en-GB/de-DE/fr-FR
search_results < search_queries ~ result hit ranking: title:title url position:int_rank snippet:sentence
vulnerabilities < scan_targets ~ vulnerability cve exploit security vuln: cve:cve severity=low/medium/high/critical cvss:cvss found_on status=open/fixed/accepted
scan_targets ~ scan scanner target pentest nmap host: host:domain ip:ip environment=prod/staging/dev last_scanned_at risk=low/medium/high
threat_indicators ~ threat ioc malware virustotal phishing intel: value:ip kind=ip/domain/hash/url confidence:small_int first_seen last_seen source=osint/vendor/internal
secrets ~ secret vault password credential keychain 1password bitwarden: name:slug path:path rotated_on expires_on version:small_int status=active/rotated/revoked
users ~ user member account identity login auth: username:username email full_name:person role=admin/editor/viewer last_login_at status=active/suspended/invited
devices ~ device iot smart home assistant homekit thermostat: name:title kind=light/thermostat/camera/lock/sensor room=kitchen/living_room/bedroom/office firmware:version online:flag
sensor_readings < devices ~ reading sensor telemetry measurement: measured_at value:ratio unit=celsius/percent/lux/ppm battery:pct
places ~ place poi location map maps nearby geocode: name:company category=restaurant/museum/park/hotel/shop address:street city latitude:lat longitude:lon rating:rating
routes ~ route directions navigation: origin:city destination:city distance_km:distance duration_min:int_ms mode=driving/walking/cycling/transit
flights ~ flight airline airport aviation: flight_number:code origin:city destination:city departs_at arrives_at aircraft=A320/B737/A350/B787 status=scheduled/boarding/departed/landed/cancelled
hotel_bookings ~ hotel booking reservation airbnb stay: hotel:company guest:person check_in check_out nights:small_int total:money status=confirmed/cancelled/pending
trips ~ trip itinerary travel vacation: name:phrase traveler:person starts_on ends_on destination:city budget:money status=planning/booked/completed
weather_forecasts < places ~ weather forecast temperature rain climate: forecast_date:date temp_high:temp temp_low:temp precipitation:pct condition=sunny/cloudy/rain/snow/storm wind_speed:small_int
stock_quotes ~ stock stocks equity share quote ticker nasdaq nyse yahoo: symbol:ticker exchange=NYSE/NASDAQ/LSE/TSE price:price change_pct:pct volume market_cap as_of:date
crypto_assets ~ crypto coin token bitcoin ethereum solana cryptocurrency coingecko: symbol:ticker name:title price:price market_cap volume_24h change_24h:pct rank:int_rank
wallet_accounts ~ wallet address onchain blockchain web3: address:wallet chain=ethereum/solana/polygon/base/bitcoin balance:money nonce:small_int created_at
chain_transactions < wallet_accounts ~ transaction tx transfer: hash:hash amount:money fee:small_money block_number:big_int status=confirmed/pending/failed sent_at
trades ~ trade trading order exchange binance broker: symbol:ticker side=buy/sell quantity price:price executed_at status=filled/partial/cancelled
bank_transactions < bank_accounts ~ transaction banking expense spend: description:phrase amount:money category=groceries/rent/travel/utilities/dining posted_on status=posted/pending
bank_accounts ~ bank account banking plaid: name:phrase institution:company kind=checking/savings/credit balance:money currency:currency opened_on
tax_filings ~ tax filing return irs vat: year:year jurisdiction:country income:money tax_due:money filed_on status=draft/filed/accepted/amended
papers ~ paper arxiv research scholar academic pubmed article publication: title:title venue=NeurIPS/ICML/ACL/Nature/Science/arXiv year:year citations doi:code status=published/preprint/retracted
paper_authors < papers ~ author researcher scientist: name:person affiliation:company position:small_int corresponding:flag
experiments < projects ~ experiment trial mlflow wandb tracking run: name:slug metric=accuracy/f1/loss/auc value:ratio params_count started_at status=running/finished/failed
ml_models ~ huggingface checkpoint weights: name:slug task=classification/generation/translation/detection parameters_b:small_int downloads license=MIT/Apache-2.0/custom updated_at
training_jobs < ml_models ~ training fine-tune finetune job gpu: dataset:slug epochs:small_int gpu=A100/H100/L4/T4 cost:money started_at status=queued/running/succeeded/failed
patients ~ patient health medical clinic ehr fhir: name:person birth_date sex=female/male/other insurance=medicare/aetna/cigna/none city
prescriptions < patients ~ prescription drug medication pharmacy: drug:drug dose_mg:small_int refills:small_int issued_on status=active/expired/cancelled
lab_results < patients ~ lab test result blood: test=glucose/hemoglobin/cholesterol/tsh value:ratio unit=mg_dL/g_dL/mIU_L flag=normal/high/low collected_on
recipes ~ recipe cooking food meal cuisine kitchen: title:title cuisine=italian/mexican/indian/japanese/french prep_min:int_ms servings:small_int calories rating:rating
games ~ game steam board chess puzzle: title:title genre=rpg/strategy/puzzle/shooter/sports platform=pc/console/mobile released_on rating:rating
players ~ player gamer leaderboard: username:username level:small_int xp country joined_at status=active/banned/inactive
matches < players ~ match round score tournament: mode=ranked/casual/tournament map:title score placement:small_int played_at
courses ~ course learning lesson class education tutor: title:title subject=math/history/language/science/programming level=beginner/intermediate/advanced price:price seats
enrollments < courses ~ enrollment student learner: student_email:email enrolled_on progress:pct status=active/completed/dropped
books ~ book goodreads isbn ebook novel: title:title author:person isbn:code pages year:year genre=fiction/science/history/biography/fantasy
job_postings ~ job jobs career hiring recruiting resume: title:phrase company:company location:city remote:flag salary_max:money posted_on status=open/closed
job_applications < job_postings ~ applicant candidate interview recruiting: candidate:person email stage=applied/screen/interview/offer/rejected applied_on score:small_int
properties ~ property real estate listing house apartment rent zillow: address:street city bedrooms:small_int price:money square_feet listed_on status=for_sale/pending/sold
news_articles ~ news headline article press rss feed: headline:title outlet:company author:person section=world/business/tech/sports/science published_at words
translations ~ translate translation language deepl localization i18n: source_language=en/de/fr/es/ja/zh target_language=en/de/fr/es/ja/zh characters quality:ratio translated_at
support_tickets < customers ~ support helpdesk zendesk freshdesk ticket complaint: subject:phrase priority=low/normal/high/urgent channel=email/chat/phone opened_at status=new/open/pending/solved
surveys ~ survey form typeform questionnaire poll feedback: title:phrase questions:small_int responses created_at status=draft/open/closed
survey_responses < surveys ~ response answer submission: respondent:email score:small_int completed:flag submitted_at
cms_posts < cms_sites ~ blog cms wordpress ghost contentful strapi post article: title:title author:person slug:slug words published_at status=draft/scheduled/published
cms_sites ~ cms site blog headless: name:title domain:domain theme:slug posts_count plan=free/pro/business
media_assets < cms_sites ~ media asset upload gallery: filename:filename kind=image/video/pdf size_kb alt_text:phrase uploaded_at
packages ~ package npm pypi dependency library crate module: name:slug ecosystem=npm/pypi/cargo/maven/go latest_version:version downloads license=MIT/Apache-2.0/GPL-3.0/BSD-3-Clause
package_versions < packages ~ version release semver changelog: version:version released_on yanked:flag size_kb
code_snippets ~ snippet code gist example: title:phrase language=python/javascript/sql/bash/go lines:small_int author:person created_at
code_runs < code_snippets ~ execute execution run sandbox interpreter jupyter notebook repl: runtime=python/node/deno/bash started_at duration_ms:int_ms exit_code=0/1/2/137 status=ok/error/timeout
lint_findings < repositories ~ lint linter sonar sonarqube eslint pylint: file:path line:small_int rule:code severity=info/warning/error status=open/fixed/ignored
test_runs < repositories ~ test testing unit pytest jest coverage: suite:slug tests_total failures:small_int coverage:pct duration_sec started_at status=passed/failed
shell_commands ~ shell terminal command bash cli ssh: command:phrase cwd:path exit_code=0/1/2/127 duration_ms:int_ms ran_at user:username
processes ~ pid cpu htop: command:phrase user:username cpu:pct memory_mb started_at status=running/sleeping/stopped
scheduled_jobs ~ cron schedule scheduler job recurring automation: name:slug schedule=hourly/daily/weekly/monthly command:phrase last_run_at next_run_at status=enabled/disabled/failed
workflows ~ workflow automation zapier n8n make pipeline: name:phrase trigger=webhook/schedule/manual/event steps:small_int runs owner:person status=active/draft/paused
workflow_steps < workflows ~ step: position:small_int app:slug action:slug retries:small_int status=ok/failing/skipped
designs ~ design figma canva ui ux mockup wireframe: name:phrase owner:person frames:small_int updated_at status=draft/review/approved
design_components < designs ~ component icon button widget: name:title kind=button/input/card/modal/icon variants:small_int updated_at
presentations ~ presentation slides powerpoint deck keynote: title:phrase owner:person slides:small_int theme:slug updated_at
diagrams ~ diagram mermaid flowchart drawio uml: title:phrase kind=flowchart/sequence/er/class/gantt nodes:small_int edges updated_at
events_tickets ~ ticket tickets concert festival eventbrite venue: event:title venue:company date:date section:code price:price status=available/sold/reserved
sports_fixtures ~ sport sports football soccer nba nfl league fixture: home_team:company away_team:company kickoff_at venue:city home_score:small_int away_score:small_int status=scheduled/live/finished
vehicles ~ vehicle car fleet tesla ev charging: plate:code make=toyota/ford/tesla/vw/bmw model:title year:year mileage status=active/maintenance/retired
parcels ~ logistics freight warehouse inventory supply: sku:code warehouse:city quantity reorder_level:small_int updated_at status=in_stock/low/out
reviews < products/places/books/apps ~ review rating feedback stars: author:person stars:stars text:sentence helpful:small_int posted_at
apps ~ app mobile ios android play store: name:title platform=ios/android/web version:version installs rating:rating updated_at
comments < social_posts/cms_posts/issues/tasks/videos/news_articles ~ comment reply discussion: author:username text:sentence likes posted_at status=visible/hidden/flagged
forum_threads ~ forum reddit community discussion hacker subreddit thread: title:title community:slug author:username score replies created_at
translations_memory ~ glossary terminology dictionary thesaurus word definition: term:word language=en/de/fr/es/ja part_of_speech=noun/verb/adjective definition:sentence examples:small_int
quotes_sayings ~ quote quotes inspiration bible verse scripture: text:sentence author:person source:title tags=wisdom/life/faith/humor added_on
habit_logs < habits ~ habit streak routine: day:date done:flag note:phrase
habits ~ habit goal wellness fitness health: name:phrase frequency=daily/weekly streak:small_int owner:person created_at
workouts ~ workout fitness exercise running strava garmin: kind=run/ride/swim/strength/yoga duration_min:int_ms distance_km:distance calories heart_rate_avg:small_int started_at
"""


@dataclass(frozen=True)
class Entity:
    key: str  # unique (archetype tables that share a name get their category's code)
    table: str
    parents: tuple[str, ...]  # entity keys
    fields: tuple[str, ...]
    words: frozenset[str]
    code: str | None = None  # the archetype category it came from, if any


_WORD = re.compile(r"[a-z][a-z0-9]+")
# words too common in server descriptions to call for an entity
_STOP = frozenset("""mcp server servers model context protocol tool tools api apis service services via the and for with from your you
integration integrations client access provide provides providing support supports using use allows enable enables based data info information
management manage manager simple easy fast powerful real time ai llm llms agent agents assistant assistants claude cursor open source free
desk board tracker browser explorer console monitor hub studio center workspace portal platform system app library lookup finder
language natural protocol version interaction interact interacting standardized standard sdk seamless seamlessly facilitate facilitates
various format formats content account key list line run item result record job type name new get set call user users query queries
model models application applications property properties option options google retrieve retrieval fetch fetching search searching create update delete control custom multiple support local remote context
""".split())  # noqa: SIM905  (a word list reads better as text)


def _stems(text: str) -> set[str]:
    return {singular(w) for w in _WORD.findall(text.lower().replace("-", " ").replace("_", " ")) if w not in _STOP and len(w) > 2}


def _parse(line: str, code: str | None = None) -> tuple[str, tuple[str, ...], tuple[str, ...], set[str]]:
    head, _, body = line.partition(":")
    head, _, words = head.partition("~")
    table, _, parents = head.partition("<")
    return table.strip(), tuple(p for p in parents.strip().split("/") if p), tuple(body.split()), set(words.split())


_DATE_FIELDS = {"check_in", "check_out", "first_seen", "last_seen", "last_analyzed", "last_run", "scheduled_for"}


def _typed(token: str) -> str:
    """A bare field whose name types it as a word (`volume_24h`, `replies`, `check_in`) gets the
    generator its meaning calls for: a date or a count (the archetype lines stay as the frozen themes use them)."""
    if ":" in token or "=" in token or _gen_from_name(token, None) != "word":
        return token
    return f"{token}:{'date' if token in _DATE_FIELDS else 'count'}"


def _library() -> dict[str, Entity]:
    """Every entity: the lines above, then the archetype tables (keyed table@code where a name repeats)."""
    out: dict[str, Entity] = {}
    for line in ENTITY_LINES.strip().splitlines():
        table, parents, fields, words = _parse(line)
        out[table] = Entity(table, table, parents, tuple(map(_typed, fields)), frozenset(_stems(" ".join(words)) | {singular(table.split("_")[-1])} | _stems(table)))
    for code in archetypes.LIBRARY:
        for d in archetypes.tables_of(code):
            key = d.name if d.name not in out else f"{d.name}@{code}"
            parent = None
            if d.parent:
                parent = d.parent if out.get(d.parent, Entity("", "", (), (), frozenset(), "?")).code == code else f"{d.parent}@{code}"
            out[key] = Entity(key, d.name, (parent,) if parent else (), tuple(map(_typed, d.fields)), frozenset(_stems(d.name)), code)
    for e in out.values():  # parents must exist
        missing = [p for p in e.parents if p not in out]
        if missing:
            raise ValueError(f"entity {e.key!r} names unknown parents {missing}")
    return out


ENTITIES: dict[str, Entity] = _library()


def compose_entities(keys, *, code: str, title: str, about: str, theme_id: str, label: str) -> ThemeDraft:
    """A catalog theme's schema from entity keys (deterministic in the theme id): each table gets a
    foreign key to the first of its parents present, so every reference points at a real row."""
    from ..envs import taxonomy

    cat = taxonomy.L2[code]
    chosen = [ENTITIES[k] for k in keys]
    present = {e.key: e.table for e in chosen}
    names = ", ".join(humanize_table(e.table) for e in chosen)
    draft = ThemeDraft(id=theme_id, title=title, category=taxonomy.L1[cat.parent].name, subcategory=cat.name, label=label, source="catalog",
                       description=f"You help the users of {title} ({about.rstrip('. ')}) look up, change and summarise its {names}.")
    seed = stable_seed("entities", theme_id)
    for i, e in enumerate(_parents_first(chosen)):
        parent = next((present[p] for p in e.parents if p in present), None)
        cols = [key_column(e.table)]
        if parent:
            cols.append(fk_column(pk_name(parent), parent))
        cols += [parse_field(f) for f in e.fields]
        rows = 15 + (seed >> i) % 26 if not parent else 30 + (seed >> i) % 91
        draft.tables.append(TableDraft(e.table, cols, parent, rows))
    return draft


def humanize_table(table: str) -> str:
    return table.split("@")[0].replace("_", " ")


def _parents_first(chosen: list[Entity]) -> list[Entity]:
    """Tables in an order where each one's parent comes before it (rows reference existing keys)."""
    keys = {e.key for e in chosen}
    out: list[Entity] = []
    pending = list(chosen)
    while pending:
        ready = [e for e in pending if next((p for p in e.parents if p in keys), None) in (None, *(o.key for o in out))]
        if not ready:  # a cycle (never in the library): keep the given order
            return out + pending
        out.append(ready[0])
        pending.remove(ready[0])
    return out


def features(keys) -> list[str]:
    """The {table.column} set a composition will have (what bench_pool_quality compares)."""
    present = {ENTITIES[k].key: ENTITIES[k].table for k in keys}
    out = []
    for k in keys:
        e = ENTITIES[k]
        parent = next((present[p] for p in e.parents if p in present), None)
        if parent:
            out.append(f"{e.table}.{pk_name(parent)}")
        out += [f"{e.table}.{re.split('[:=]', f)[0]}" for f in e.fields]
    return sorted(out)


def entities_for(text: str, name: str) -> list[tuple[int, str]]:
    """(score, entity key) of the entities the text calls for, best first (name words count double)."""
    words = _stems(text) | _stems(name)
    named = _stems(name)
    scored = []
    for e in ENTITIES.values():
        hits = e.words & words
        if hits:
            scored.append((len(hits) + len(e.words & named), e.key))
    return sorted(scored, key=lambda x: (-x[0], x[1]))


def _candidates(matched: list[str]) -> list[tuple[str, ...]]:
    """Combinations to try, most called-for first: 3-5 tables with distinct names (2 when the words call
    for only 2), each one an entity the server's words call for. A parent the words do not call for is
    not pulled in (a child whose parent is absent has no foreign key): a theme holds only what its
    server says it manages."""
    out = []
    top = matched[:7]
    for size in (4, 3, 5, 2):
        for combo in itertools.combinations(top, min(size, len(top))):
            tables = [ENTITIES[k].table for k in combo]
            if len(set(tables)) == len(tables) and len(combo) >= min(3, len(set(ENTITIES[k].table for k in matched))):
                out.append(tuple(combo))
            if len(out) >= 40:
                return list(dict.fromkeys(out))
    return list(dict.fromkeys(out))


def plan_catalog(profiles: Path, index, used: set[str], target: int = 1400, limit: int | None = None, covered=(), fill: int = 5):
    """[(theme id, Source, ref)] for up to `target` real servers whose words call for >= 2 entities and
    whose composition overlaps every theme in `index` (an OverlapIndex, updated) by < MAX_OVERLAP.

    Servers are taken round-robin over the L2 categories they map to, in a fixed order; a server whose
    slug is taken (a fork or a same-named server) is skipped. An L2 category still without a theme (in
    the plan or `covered`) then gets up to `fill` servers whose words call for its archetype's entities."""
    from ..envs import taxonomy
    from .mapping import map_to_taxonomy

    by_code: dict[str, list[dict]] = {}
    for row in sorted(read_profiles(profiles), key=lambda r: stable_seed("profile", r["id"])):
        name, about = str(row["name"]).strip().split("/")[-1].strip(), row["about"]
        if not name or not about:
            continue
        code = map_to_taxonomy(name, (str(row.get("category", "")),), about, ())[0]
        by_code.setdefault(code, []).append({"name": name, "about": about, "category": str(row.get("category", "")), "code": code})
    everyone = [p for c in sorted(by_code) for p in by_code[c]]
    queues = [list(by_code[c]) for c in sorted(by_code)]
    plan = []
    while len(plan) < target and any(queues):
        for q in queues:
            if not q or len(plan) >= target:
                continue
            p = q.pop(0)
            item = _take(p, [k for _, k in entities_for(p["about"], p["name"])], index, used)
            if item:
                plan.append(item)
            if limit and len(plan) >= limit:
                return plan
    have = set(covered) | {src.code for _, src, _ in plan}
    for code in sorted(set(taxonomy.L2) - have):
        n = 0
        for p in everyone:
            matched = [k for _, k in entities_for(p["about"], p["name"])]
            own = [k for k in matched if ENTITIES[k].code == code]
            item = _take({**p, "code": code}, own + [k for k in matched if k not in own], index, used) if own else None
            if item:
                plan.append(item)
                n += 1
                if n >= fill:
                    break
    return plan


def _take(p: dict, matched: list[str], index, used: set[str]):
    """One planned theme for profile `p`, or None (slug taken, too little called for, or every combination too close)."""
    from .sources import Source

    tid = slugify(p["name"])
    if not tid or tid in used or len({ENTITIES[k].table for k in matched}) < 2:
        return None  # taken, or its words call for too little: its name could not match what it holds
    for keys in _candidates(matched):
        feats = features(keys)
        if index.nearest(feats)[1] < MAX_OVERLAP:
            break
    else:
        return None
    used.add(tid)
    index.add(tid, feats)
    label = f"{p['category'].lower()}: " + ", ".join(humanize_table(ENTITIES[k].table) for k in keys[:3])
    ref = {"name": p["name"], "about": p["about"], "entities": list(keys), "label": label}
    return tid, Source(p["name"], "catalog", (), p["about"], None, f"catalog:{tid}", code=p["code"], entities=tuple(keys), label=label), ref


def read_profiles(path: str | Path) -> list[dict]:
    """[{id, name, about, category}] from the derived profile facts (.jsonl.gz) or the full TensorBlock
    catalogue (JSON Lines with a "description", whose first sentence becomes "about")."""
    import gzip

    path = Path(path)
    with (gzip.open(path, "rt", encoding="utf-8") if path.suffix == ".gz" else path.open(encoding="utf-8")) as f:
        rows = [json.loads(line) for line in f if line.strip()]
    return [{"id": r["id"], "name": r["name"], "about": r["about"] if "about" in r else _about(r.get("description") or ""),
             "category": r.get("category", "")} for r in rows]


def write_profile_facts(src: str | Path, dst: str | Path = PROFILES) -> int:
    """Keep of the catalogue at `src` only what the planner reads (profiles with a name and a
    description); gzip without a timestamp, so the same catalogue gives the same bytes. Returns the rows kept."""
    import gzip

    rows = [r for r in read_profiles(src) if str(r["name"]).strip() and r["about"]]
    text = "".join(json.dumps(r, ensure_ascii=False, sort_keys=True) + "\n" for r in rows)
    dst = Path(dst)
    tmp = dst.with_name(dst.name + ".tmp")
    with open(tmp, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", compresslevel=9, mtime=0, filename="") as f:
        f.write(text.encode("utf-8"))
    tmp.replace(dst)
    return len(rows)


def _about(text: str) -> str:
    """A server's own one-line description, trimmed to its first sentence (links and markup dropped)."""
    text = re.sub(r"https?://\S+|[*_`#\[\]]", "", str(text)).strip()
    first = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    if len(first) > ABOUT_CAP:  # cut at a word, never mid-word
        first = first[:ABOUT_CAP].rsplit(" ", 1)[0].rstrip(",;:-— ") + "..."
    return first.strip()


MAX_OVERLAP = 0.6  # a theme stays only if its nearest neighbour's {table.column} Jaccard is below this
