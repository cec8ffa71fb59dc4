#!/usr/bin/env bash
# End-to-end test of the Scrapy pipeline on a real crawl, installed the way
# Scrapy users install it: the package in this folder (pyproject.toml) is
# built into a wheel and installed with pip into a virtual environment, a
# project is generated with `scrapy startproject`, and its settings.py
# enables crawlkeeper_scrapy.CrawlkeeperPipeline. Debian's reference manual
# (package debian-reference-en, HTML written by others) is copied to a
# temporary folder, served by a local static server and crawled twice by
# that project into a running `crawlkeeper serve`. Between the rounds a few
# pages are edited and some removed. Then it checks: no duplicates, edited
# pages have a new version and history, crawled_at is unchanged, removed
# pages are archived as stale once the clock passes stale_after (and not
# before), and the monitor's rounds show every page done.
#
# Needs /usr/bin/python3 with Scrapy (Debian: python3-scrapy), venv,
# setuptools and wheel (python3-venv, python3-setuptools, python3-wheel)
# and debian-reference-en; as root it installs them with apt-get when
# missing. No package registry is needed: pip builds and installs with
# --no-index, and the virtual environments see the system's Scrapy
# (--system-site-packages). Any mismatch fails the script with a message
# saying what differed.
set -euo pipefail
cd "$(dirname "$0")/../.."
PY=/usr/bin/python3 # Debian's python3-scrapy installs for this interpreter only
SITE_SRC=/usr/share/debian-reference

log() { printf '[e2e %3ds] %s\n' "$SECONDS" "$*"; }
fail() { printf '[e2e] FAIL: %s\n' "$*" >&2; exit 1; }

have_tools() {
	"$PY" -c 'import scrapy, ensurepip, setuptools, wheel' 2>/dev/null && ls "$SITE_SRC"/*.en.html >/dev/null 2>&1
}
if ! have_tools; then
	[ "$(id -u)" = 0 ] || fail "install python3-scrapy, python3-venv, python3-setuptools, python3-wheel and debian-reference-en with apt-get, or run as root"
	log "installing python3-scrapy, python3-venv, python3-setuptools, python3-wheel and debian-reference-en"
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3-scrapy python3-venv python3-setuptools python3-wheel debian-reference-en >/dev/null
fi
"$PY" -c 'import scrapy' || fail "$PY cannot import scrapy"
export PYTHONDONTWRITEBYTECODE=1 # keep the source tree clean
unset PYTHONPATH                 # the pipeline must come from the installed package

WORK="$(mktemp -d)"
PIDS=()
cleanup() {
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	if [ "${KEEP:-}" = 1 ]; then echo "kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT

# Building writes build/ and *.egg-info next to the sources: it runs on a
# copy, so the checkout stays clean.
cp -r integrations/scrapy "$WORK/src"
rm -rf "$WORK/src/build" "$WORK/src/dist" "$WORK/src"/*.egg-info
pip_offline() { "$1" -m pip "${@:2}" --quiet --no-index --disable-pip-version-check; }

log "pip install of the folder into a virtual environment"
"$PY" -m venv --system-site-packages "$WORK/venv-dir"
pip_offline "$WORK/venv-dir/bin/python" install --no-build-isolation "$WORK/src" ||
	fail "pip install of integrations/scrapy failed"
(cd "$WORK" && "$WORK/venv-dir/bin/python" -c 'import crawlkeeper_scrapy, sys; assert crawlkeeper_scrapy.__file__.startswith(sys.prefix), crawlkeeper_scrapy.__file__') ||
	fail "pip install ./integrations/scrapy did not install crawlkeeper_scrapy into the virtual environment"

log "pip wheel, installed into the crawl's virtual environment"
"$PY" -m venv --system-site-packages "$WORK/venv"
VPY="$WORK/venv/bin/python"
pip_offline "$VPY" wheel --no-build-isolation --no-deps -w "$WORK/dist" "$WORK/src" || fail "pip wheel of integrations/scrapy failed"
pip_offline "$VPY" install "$WORK"/dist/crawlkeeper_scrapy-*.whl || fail "pip install of the wheel failed"
installed=$(cd "$WORK" && "$VPY" -c 'import crawlkeeper_scrapy; print(crawlkeeper_scrapy.__file__)')
case "$installed" in
"$WORK/venv/"*) log "crawlkeeper_scrapy is $installed" ;;
*) fail "crawlkeeper_scrapy comes from $installed, not from the virtual environment" ;;
esac

log "pipeline unit tests on the installed package (local fake servers)"
mkdir "$WORK/tests"
cp integrations/scrapy/test_crawlkeeper_scrapy.py "$WORK/tests/"
(cd "$WORK" && "$VPY" -m unittest discover -s "$WORK/tests" -p 'test_*.py') >"$WORK/unittest.log" 2>&1 ||
	{ cat "$WORK/unittest.log"; fail "the pipeline's unit tests failed"; }
tail -n 1 "$WORK/unittest.log"

log "building crawlkeeper"
go build -o "$WORK/crawlkeeper" ./cmd/crawlkeeper
CK="$WORK/crawlkeeper"

free_port() { "$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }

# The site: a copy of every English HTML chapter.
mkdir -p "$WORK/site"
cp "$SITE_SRC"/*.en.html "$WORK/site/"
PAGES=$(ls "$WORK/site" | wc -l)
[ "$PAGES" -ge 10 ] || fail "expected the reference manual's chapters in $SITE_SRC, found $PAGES pages"
WEB_PORT=$(free_port)
"$PY" -m http.server --bind 127.0.0.1 --directory "$WORK/site" "$WEB_PORT" >"$WORK/web.log" 2>&1 &
PIDS+=($!)
WEB="http://127.0.0.1:$WEB_PORT"

API_PORT=$(free_port)
API="http://127.0.0.1:$API_PORT"
CRAWLER_TOKEN="crawler-$RANDOM$RANDOM"
READER_TOKEN="reader-$RANDOM$RANDOM"
export CRAWLKEEPER_TOKENS="crawler=$CRAWLER_TOKEN:ingest;reader=$READER_TOKEN:read,admin"
cat >"$WORK/config.yaml" <<EOF
defaults:
  stale_after: 3h
sources:
  debian-reference:
    history_limit: 10
EOF
export CRAWLKEEPER_CONFIG="$WORK/config.yaml"
DATA="$WORK/data"

# The clock: round 1 at T1, round 2 two hours later, so that the pages
# removed before round 2 are not yet stale right after it and are once
# the clock passes T1 + stale_after.
T1=$(date -u +%Y-%m-%dT%H:%M:%SZ)
at() { date -u -d "$T1 $1" +%Y-%m-%dT%H:%M:%SZ; }
T2=$(at "+2 hours")

SERVE_PID=
start_serve() {
	"$CK" serve --data "$DATA" --addr "127.0.0.1:$API_PORT" --now "$1" --archive-every off >"$WORK/serve-$1.log" 2>&1 &
	SERVE_PID=$!
	PIDS+=("$SERVE_PID")
	for _ in $(seq 100); do
		if curl -fsS "$API/readyz" >/dev/null 2>&1; then return 0; fi
		kill -0 "$SERVE_PID" 2>/dev/null || { cat "$WORK/serve-$1.log"; fail "serve exited at start"; }
		sleep 0.1
	done
	cat "$WORK/serve-$1.log"
	fail "serve did not become ready on $API"
}
stop_serve() {
	kill -TERM "$SERVE_PID"
	wait "$SERVE_PID" || fail "serve did not shut down cleanly (see $WORK/serve-*.log)"
}
api() { curl -fsS -H "Authorization: Bearer $READER_TOKEN" "$API$1"; }

# queue_round ROUND: schedules every page of the site as a target.
queue_round() {
	ls "$WORK/site" | sed "s|^|$WEB/|" |
		curl -fsS -H "Authorization: Bearer $CRAWLER_TOKEN" --data-binary @- "$API/api/v1/rounds/$1/queue" >/dev/null
}

# The crawler: a project generated by `scrapy startproject`, the spider in
# its spiders/ folder, and the pipeline enabled in its settings.py the way
# the README says.
log "scrapy startproject refcrawl"
(cd "$WORK" && "$VPY" -m scrapy startproject refcrawl >/dev/null) || fail "scrapy startproject failed"
PROJECT="$WORK/refcrawl"
cp integrations/scrapy/e2e/reference_spider.py "$PROJECT/refcrawl/spiders/reference.py"
cat >>"$PROJECT/refcrawl/settings.py" <<EOF

# crawlkeeper (pip install ./integrations/scrapy)
ITEM_PIPELINES = {"crawlkeeper_scrapy.CrawlkeeperPipeline": 300}
CRAWLKEEPER_URL = "$API"
CRAWLKEEPER_TOKEN = "$CRAWLER_TOKEN"
CRAWLKEEPER_TARGET_FIELD = "url"
EOF

# crawl ROUND INSERTED CHANGED MIN_SENT: runs the project's spider through
# the pipeline into serve and checks the pipeline's counters.
crawl() {
	(cd "$PROJECT" && "$VPY" -m scrapy crawl debian-reference \
		-a start="$WEB/index.en.html" \
		-s CRAWLKEEPER_ROUND="$1" -s CRAWLKEEPER_BATCH=5 \
		-s LOG_LEVEL=INFO -s LOG_FILE="$WORK/scrapy-$1.log") || { tail -n 30 "$WORK/scrapy-$1.log"; fail "scrapy crawl of round $1 failed"; }
	grep -A3 "Enabled item pipelines:" "$WORK/scrapy-$1.log" | grep -q "crawlkeeper_scrapy.CrawlkeeperPipeline" ||
		fail "round $1: the project did not enable crawlkeeper_scrapy.CrawlkeeperPipeline (see $WORK/scrapy-$1.log)"
	# The spider fetches its start page twice (start requests bypass
	# Scrapy's duplicate filter and the page links to itself), so more items
	# are sent than there are pages; crawlkeeper must count the extra
	# deliveries as unchanged, never as new records.
	stat() { sed -n "s/.*'crawlkeeper\/$1': \([0-9]*\).*/\1/p" "$WORK/scrapy-$2.log" | tail -n 1; }
	local sent inserted changed unchanged
	sent=$(stat sent "$1") inserted=$(stat inserted "$1") changed=$(stat changed "$1") unchanged=$(stat unchanged "$1")
	[ -n "$sent" ] || { tail -n 30 "$WORK/scrapy-$1.log"; fail "round $1: no crawlkeeper stats in the Scrapy log"; }
	[ "$inserted" = "$2" ] && [ "$changed" = "$3" ] && [ "$sent" -ge "$4" ] && [ $((inserted + changed + unchanged)) = "$sent" ] ||
		fail "round $1: sent $sent items, $inserted inserted, $changed changed, $unchanged unchanged; want $2 inserted, $3 changed, at least $4 sent"
	for k in dropped failed rejected; do
		[ "$(stat $k "$1")" = 0 ] || fail "round $1: crawlkeeper/$k is not 0 (see $WORK/scrapy-$1.log)"
	done
	log "round $1: the pipeline sent $sent items: $inserted inserted, $changed changed, $unchanged unchanged"
}

# check NAME PYTHON: evaluates a Python check over JSON files in $WORK; the
# check raises AssertionError with a message on a mismatch.
check() {
	local name=$1
	shift
	WORK="$WORK" T1="$T1" T2="$T2" WEB="$WEB" PAGES="$PAGES" "$PY" -c "
import json, os, sys
W = os.environ['WORK']
def load(name): return json.load(open(os.path.join(W, name)))
def lines(name): return [json.loads(l) for l in open(os.path.join(W, name)) if l.strip()]
T1, T2, WEB, PAGES = os.environ['T1'], os.environ['T2'], os.environ['WEB'], int(os.environ['PAGES'])
def ts(s): return s.replace('+00:00', 'Z')
$*
" || fail "$name"
	log "ok: $name"
}

log "round 1 at $T1: crawling $PAGES pages of $WEB"
start_serve "$T1"
queue_round 1
crawl 1 "$PAGES" 0 "$PAGES"
api /api/v1/rounds/1 >"$WORK/round1.json"
api "/api/v1/records?source=debian-reference&limit=1000" >"$WORK/records1.json"
check "round 1: every page done" '
r = load("round1.json")
assert (r["queued"], r["done"], r["remaining"], r["failed"]) == (PAGES, PAGES, 0, 0), r'
check "round 1: one record per page" '
recs = load("records1.json")["records"]
urls = sorted(r["url"] for r in recs)
assert len(recs) == PAGES and len(set(urls)) == PAGES, (len(recs), urls)
assert all(r["version"] == 1 and ts(r["crawled_at"]) == T1 for r in recs), [(r["url"], r["version"], r["crawled_at"]) for r in recs]'
stop_serve

# Between the rounds: edit three pages' text and remove two pages.
EDITED="ch03.en.html ch05.en.html pr01.en.html"
REMOVED="ch11.en.html apa.en.html"
for f in $EDITED; do
	"$PY" - "$WORK/site/$f" <<'EOF'
import re, sys
p = sys.argv[1]
s = open(p, encoding="utf-8").read()
s, n = re.subn(r"(<body[^>]*>)", r"\1<p>Revised for the second crawl round.</p>", s, count=1)
assert n == 1, p
open(p, "w", encoding="utf-8").write(s)
EOF
done
for f in $REMOVED; do rm "$WORK/site/$f"; done
PAGES2=$(ls "$WORK/site" | wc -l)

log "round 2 at $T2: $PAGES2 pages after editing 3 and removing 2"
start_serve "$T2"
queue_round 2
crawl 2 0 3 "$PAGES2"
api /api/v1/rounds/2 >"$WORK/round2.json"
api "/api/v1/records?source=debian-reference&limit=1000" >"$WORK/records2.json"
for f in $EDITED; do
	id=$("$PY" -c "import json,sys; print(next(r['id'] for r in json.load(open('$WORK/records2.json'))['records'] if r['url'].endswith('/$f')))")
	api "/api/v1/records/$id/history" >"$WORK/history-$f.json"
done
check "round 2: every remaining page done" "
r = load('round2.json')
assert (r['queued'], r['done'], r['remaining'], r['failed']) == ($PAGES2, $PAGES2, 0, 0), r"
check "round 2: no duplicates, versions, crawled_at and last_updated_at" "
recs = load('records2.json')['records']
assert len(recs) == PAGES and len({r['url'] for r in recs}) == PAGES, ('duplicates or missing records', len(recs))
before = {r['url']: r for r in load('records1.json')['records']}
edited, removed = '$EDITED'.split(), '$REMOVED'.split()
for r in recs:
    name = r['url'].rsplit('/', 1)[1]
    b = before[r['url']]
    assert r['id'] == b['id'] and ts(r['crawled_at']) == T1, ('crawled_at or id changed', name, r['crawled_at'])
    want_version = 2 if name in edited else 1
    assert r['version'] == want_version, (name, 'version', r['version'], 'want', want_version)
    assert (r['content_hash'] != b['content_hash']) == (name in edited), (name, 'content hash')
    want_seen = T1 if name in removed else T2
    assert ts(r['last_updated_at']) == want_seen, (name, 'last_updated_at', r['last_updated_at'], 'want', want_seen)
"
check "round 2: edited pages keep their previous version in the history" "
for f in '$EDITED'.split():
    h = load('history-%s.json' % f)
    assert h['record']['version'] == 2 and len(h['versions']) == 1, (f, len(h['versions']))
    old = h['versions'][0]
    assert old['version'] == 1 and ts(old['valid_from']) == T1 and ts(old['valid_to']) == T2, (f, old['version'], old['valid_from'], old['valid_to'])
    assert 'Revised for the second crawl round' not in json.dumps(old['item']), f
    assert 'Revised for the second crawl round' in json.dumps(h['record']['item']), f
"
stop_serve

log "archive: right after round 2 nothing is stale; past T1 + stale_after the removed pages are"
"$CK" archive --data "$DATA" --now "$T2" --json >"$WORK/archive-early.json"
"$CK" archive --data "$DATA" --now "$(at '+3 hours 30 minutes')" --json >"$WORK/archive-late.json"
"$CK" records --data "$DATA" --archived >"$WORK/archived.jsonl"
"$CK" records --data "$DATA" >"$WORK/active.jsonl"
"$CK" check --data "$DATA" --json >"$WORK/check.json" || { cat "$WORK/check.json"; fail "crawlkeeper check found violations"; }
check "archive: removed pages archived as stale at the right time" "
early, late = load('archive-early.json'), load('archive-late.json')
assert early['archived'] == 0, ('archived before stale_after passed', early)
assert late['archived'] == 2 and late['by_reason'].get('stale') == 2, late
archived = lines('archived.jsonl')
assert sorted(r['url'].rsplit('/', 1)[1] for r in archived) == sorted('$REMOVED'.split()), [r['url'] for r in archived]
assert all(r['archive_reason'] == 'stale' and ts(r['crawled_at']) == T1 for r in archived), archived
active = lines('active.jsonl')
assert len(active) == $PAGES2 and not {r['url'] for r in active} & {r['url'] for r in archived}
assert load('check.json')['ok'] is True
"
"$CK" export --data "$DATA" --all --history --json "$WORK/export.jsonl.zst" >"$WORK/export.json"
check "export: every record with its history" "
e = load('export.json')
assert (e['active'], e['archived'], e['history_versions']) == ($PAGES2, 2, 3), e
"
# A recrawl scheduled by the advisor: a spider whose start requests come
# from GET /api/v1/next (NextRequestsMixin) fetches exactly the pages the
# advisor lists, none of them archived, and delivers them through the
# pipeline.
T3=$(at "+3 hours 40 minutes")
log "recrawl at $T3: the spider takes its start requests from the advisor"
start_serve "$T3"
api "/api/v1/next?source=debian-reference&budget=$PAGES2/day&limit=5&fill=true" >"$WORK/next.json"
cp integrations/scrapy/e2e/next_spider.py "$PROJECT/refcrawl/spiders/reference_next.py"
(cd "$PROJECT" && "$VPY" -m scrapy crawl debian-reference-next \
	-s CRAWLKEEPER_READ_TOKEN="$READER_TOKEN" -s CRAWLKEEPER_NEXT_BUDGET="$PAGES2/day" \
	-s CRAWLKEEPER_NEXT_LIMIT=5 -s CRAWLKEEPER_NEXT_FILL=true -s CRAWLKEEPER_BATCH=5 \
	-s LOG_LEVEL=DEBUG -s LOG_FILE="$WORK/scrapy-next.log") || { tail -n 30 "$WORK/scrapy-next.log"; fail "scrapy crawl of the advisor's pages failed"; }
grep -o 'Crawled (200) <GET [^>]*>' "$WORK/scrapy-next.log" | sed 's/.*<GET \(.*\)>/\1/' | sort >"$WORK/next-crawled.txt"
sent=$(sed -n "s/.*'crawlkeeper\/sent': \([0-9]*\).*/\1/p" "$WORK/scrapy-next.log" | tail -n 1)
check "recrawl: the spider fetched the advisor's pages, none archived" "
plan = load('next.json')
names = sorted(it['name'] for it in plan['items'])
crawled = [l.strip() for l in open(os.path.join(W, 'next-crawled.txt')) if l.strip()]
assert len(names) == 5 and crawled == names, ('advisor', names, 'crawled', crawled)
archived = {r['url'] for r in lines('archived.jsonl')}
assert not archived & set(names), ('archived pages proposed', archived & set(names))
assert plan['records'] == $PAGES2 and plan['source'] == 'debian-reference', (plan['records'], plan['source'])
assert '$sent' == '5', ('the pipeline sent', '$sent')
"
stop_serve
log "passed"
