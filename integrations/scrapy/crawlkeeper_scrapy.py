"""Scrapy item pipeline that pushes items to a crawlkeeper server.

Items are sent in batches to ``POST /api/v1/items`` as JSON lines, with
the spider's name as the source and an optional crawl round and target.
The crawl never waits for the server: ``process_item`` only puts the
encoded item on a bounded queue that a background thread drains; when the
queue is full the item is dropped and counted. On shutdown the thread
gets ``CRAWLKEEPER_CLOSE_TIMEOUT`` seconds to deliver what is left; items
still waiting then are counted as dropped too.

Install it into the crawler's environment (``pip install
./integrations/scrapy`` from a crawlkeeper clone) and enable it in the
project's ``settings.py``::

    ITEM_PIPELINES = {"crawlkeeper_scrapy.CrawlkeeperPipeline": 300}
    CRAWLKEEPER_URL = "http://127.0.0.1:8080"
    CRAWLKEEPER_TOKEN = "..."          # a token with the ingest scope

A spider can also take its start requests from crawlkeeper's recrawl
advisor (``GET /api/v1/next``): the pages of its source worth fetching now
within a crawl budget, pages never fetched first. Mix ``NextRequestsMixin``
into the spider, or call ``next_items`` from your own ``start_requests``::

    class JobsSpider(NextRequestsMixin, scrapy.Spider):
        name = "jobs"                      # the source crawlkeeper ranks
        custom_settings = {"CRAWLKEEPER_NEXT_BUDGET": "20000/day"}

Every setting is described in README.md next to this file. Only the
Python standard library and Scrapy are needed.
"""

import datetime
import decimal
import json
import logging
import queue
import random
import threading
import time
import urllib.error
import urllib.parse
import urllib.request

import scrapy
from itemadapter import ItemAdapter
from scrapy.exceptions import NotConfigured

__all__ = ["CrawlkeeperPipeline", "NextRequestsMixin", "next_items"]
__version__ = "1.0"

logger = logging.getLogger("crawlkeeper")

DEFAULTS = {
    "CRAWLKEEPER_BATCH": 500,
    "CRAWLKEEPER_BATCH_BYTES": 4 << 20,
    "CRAWLKEEPER_FLUSH_INTERVAL": 1.0,
    "CRAWLKEEPER_QUEUE_SIZE": 10000,
    "CRAWLKEEPER_TIMEOUT": 30.0,
    "CRAWLKEEPER_CLOSE_TIMEOUT": 30.0,
    "CRAWLKEEPER_RETRIES": 5,
    "CRAWLKEEPER_BACKOFF": 0.5,
    "CRAWLKEEPER_MAX_BACKOFF": 30.0,
}


def _json_default(value):
    """Encodes the values Scrapy items commonly hold that json cannot."""
    if isinstance(value, (datetime.datetime, datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, decimal.Decimal):
        return str(value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode("utf-8", "replace")
    if isinstance(value, (set, frozenset, tuple)):
        return list(value)
    try:
        return ItemAdapter(value).asdict()
    except TypeError:
        return str(value)


class _Rejected(Exception):
    """The server refused the batch for good (a 4xx other than 429)."""


class CrawlkeeperPipeline:
    """Batches items to crawlkeeper from a background thread."""

    def __init__(self, url, token=None, batch=500, batch_bytes=4 << 20, flush_interval=1.0,
                 queue_size=10000, timeout=30.0, close_timeout=30.0, retries=5, backoff=0.5,
                 max_backoff=30.0, source=None, round=None, target=None, target_field=None,
                 stats=None):
        if not url:
            raise NotConfigured("CRAWLKEEPER_URL is not set")
        parsed = urllib.parse.urlparse(url)
        if parsed.scheme not in ("http", "https") or not parsed.netloc:
            raise ValueError("CRAWLKEEPER_URL %r: use the server's base URL, such as http://127.0.0.1:8080" % url)
        self.url = url.rstrip("/") + "/api/v1/items"
        self.token = token
        self.batch = max(1, int(batch))
        self.batch_bytes = max(1, int(batch_bytes))
        self.flush_interval = float(flush_interval)
        self.timeout = float(timeout)
        self.close_timeout = float(close_timeout)
        self.retries = max(0, int(retries))
        self.backoff = float(backoff)
        self.max_backoff = float(max_backoff)
        self.source = source
        self.round = round
        self.target = target
        self.target_field = target_field
        self.stats = stats
        self.queue = queue.Queue(maxsize=max(1, int(queue_size)))
        self.closing = threading.Event()
        self.abort = threading.Event()
        self.thread = None
        self.endpoint = None
        self.lock = threading.Lock()
        self.counts = {
            "queued": 0, "dropped": 0, "sent": 0, "rejected": 0, "failed": 0,
            "batches": 0, "retries": 0, "inserted": 0, "changed": 0, "unchanged": 0,
        }

    @classmethod
    def from_crawler(cls, crawler):
        s = crawler.settings
        url = s.get("CRAWLKEEPER_URL")
        if not url:
            raise NotConfigured("CRAWLKEEPER_URL is not set")
        return cls(
            url=url,
            token=s.get("CRAWLKEEPER_TOKEN"),
            batch=s.getint("CRAWLKEEPER_BATCH", DEFAULTS["CRAWLKEEPER_BATCH"]),
            batch_bytes=s.getint("CRAWLKEEPER_BATCH_BYTES", DEFAULTS["CRAWLKEEPER_BATCH_BYTES"]),
            flush_interval=s.getfloat("CRAWLKEEPER_FLUSH_INTERVAL", DEFAULTS["CRAWLKEEPER_FLUSH_INTERVAL"]),
            queue_size=s.getint("CRAWLKEEPER_QUEUE_SIZE", DEFAULTS["CRAWLKEEPER_QUEUE_SIZE"]),
            timeout=s.getfloat("CRAWLKEEPER_TIMEOUT", DEFAULTS["CRAWLKEEPER_TIMEOUT"]),
            close_timeout=s.getfloat("CRAWLKEEPER_CLOSE_TIMEOUT", DEFAULTS["CRAWLKEEPER_CLOSE_TIMEOUT"]),
            retries=s.getint("CRAWLKEEPER_RETRIES", DEFAULTS["CRAWLKEEPER_RETRIES"]),
            backoff=s.getfloat("CRAWLKEEPER_BACKOFF", DEFAULTS["CRAWLKEEPER_BACKOFF"]),
            max_backoff=s.getfloat("CRAWLKEEPER_MAX_BACKOFF", DEFAULTS["CRAWLKEEPER_MAX_BACKOFF"]),
            source=s.get("CRAWLKEEPER_SOURCE"),
            round=s.get("CRAWLKEEPER_ROUND"),
            target=s.get("CRAWLKEEPER_TARGET"),
            target_field=s.get("CRAWLKEEPER_TARGET_FIELD"),
            stats=crawler.stats,
        )

    # Scrapy hooks, called from the crawl's thread.

    def open_spider(self, spider):
        # A spider argument (scrapy crawl -a crawlkeeper_round=7) wins over
        # the setting, so one project can run rounds without editing it.
        rnd = getattr(spider, "crawlkeeper_round", None) or self.round
        params = {"source": self.source or spider.name}
        if rnd not in (None, ""):
            params["round"] = str(rnd)
        if self.target:
            params["target"] = self.target
        self.endpoint = self.url + "?" + urllib.parse.urlencode(params)
        self.thread = threading.Thread(target=self._run, name="crawlkeeper-sender", daemon=True)
        self.thread.start()
        logger.info("crawlkeeper: sending items to %s (source %s, round %s)", self.url, params["source"], params.get("round", "-"))

    def process_item(self, item, spider):
        data = ItemAdapter(item).asdict()
        if self.target_field and "_target" not in data:
            value = data.get(self.target_field)
            if value not in (None, ""):
                data["_target"] = str(value)
        try:
            line = json.dumps(data, default=_json_default, ensure_ascii=False, separators=(",", ":"))
        except (TypeError, ValueError) as exc:
            self._count("dropped")
            logger.warning("crawlkeeper: dropped an item that cannot be encoded as JSON: %s", exc)
            return item
        try:
            self.queue.put_nowait(line.encode("utf-8"))
        except queue.Full:
            dropped = self._count("dropped")
            # Log the first drop and then every thousandth, so a long outage
            # is visible without flooding the log.
            if dropped == 1 or dropped % 1000 == 0:
                logger.warning("crawlkeeper: the send queue is full (%d items, the server is slow or down): "
                               "%d items dropped so far; the crawl goes on", self.queue.maxsize, dropped)
        else:
            self._count("queued")
        return item

    def close_spider(self, spider):
        self.closing.set()
        if self.thread is not None:
            self.thread.join(self.close_timeout)
            if self.thread.is_alive():
                # Stop retrying and waiting; whatever is left is lost.
                self.abort.set()
                self.thread.join(self.timeout + 1)
        left = 0
        while True:
            try:
                self.queue.get_nowait()
                left += 1
            except queue.Empty:
                break
        if left:
            self._count("dropped", left)
            logger.error("crawlkeeper: %d items were not sent within CRAWLKEEPER_CLOSE_TIMEOUT (%ss)", left, self.close_timeout)
        c = self.snapshot()
        if self.stats is not None:
            for k, v in c.items():
                self.stats.set_value("crawlkeeper/" + k, v, spider=spider)
        log = logger.warning if (c["dropped"] or c["failed"] or c["rejected"]) else logger.info
        log("crawlkeeper: sent %(sent)d items in %(batches)d batches (%(inserted)d inserted, %(changed)d changed, "
            "%(unchanged)d unchanged); %(rejected)d rejected, %(failed)d failed, %(dropped)d dropped, %(retries)d retries", c)

    def snapshot(self):
        """Returns a copy of the counters."""
        with self.lock:
            return dict(self.counts)

    def _count(self, name, n=1):
        with self.lock:
            self.counts[name] += n
            return self.counts[name]

    # The sender thread.

    def _run(self):
        batch, size, first = [], 0, None
        while True:
            if self.abort.is_set():
                return
            wait = 0.1
            if batch:
                wait = max(0.0, min(wait, first + self.flush_interval - time.monotonic()))
            try:
                line = self.queue.get(timeout=wait)
            except queue.Empty:
                line = None
            if line is not None:
                if batch and size + len(line) + 1 > self.batch_bytes:
                    self._deliver(batch)
                    batch, size = [], 0
                if not batch:
                    first = time.monotonic()
                batch.append(line)
                size += len(line) + 1
                if len(batch) >= self.batch:
                    self._deliver(batch)
                    batch, size = [], 0
                continue
            if batch and (time.monotonic() - first >= self.flush_interval or self.closing.is_set()):
                self._deliver(batch)
                batch, size = [], 0
            if self.closing.is_set() and not batch and self.queue.empty():
                return

    def _deliver(self, batch):
        """Sends one batch, splitting it when the server says it is too large."""
        try:
            summary = self._post(batch)
        except _Rejected as exc:
            if exc.args[0] == 413 and len(batch) > 1:
                half = len(batch) // 2
                self._deliver(batch[:half])
                self._deliver(batch[half:])
                return
            self._count("failed", len(batch))
            self._count("batches")
            logger.error("crawlkeeper: a batch of %d items was refused: %s", len(batch), exc.args[1])
            return
        except Exception as exc:  # network errors and 5xx after the retries
            self._count("failed", len(batch))
            self._count("batches")
            logger.error("crawlkeeper: a batch of %d items failed after %d retries: %s", len(batch), self.retries, exc)
            return
        rejected = int(summary.get("rejected", 0))
        with self.lock:
            self.counts["batches"] += 1
            self.counts["sent"] += len(batch) - rejected
            self.counts["rejected"] += rejected
            for k in ("inserted", "changed", "unchanged"):
                self.counts[k] += int(summary.get(k, 0))
        for err in (summary.get("errors") or [])[:5]:
            logger.warning("crawlkeeper: item %s of a batch rejected: %s", err.get("line"), err.get("error"))

    def _post(self, batch):
        """Posts a batch with retries on 429, 5xx and network errors.

        Retrying is safe: crawlkeeper deduplicates, so items stored by a
        failed attempt come back as unchanged. Returns the ingest summary;
        a 400 answer with a summary (some items rejected, the rest stored)
        is returned as well.
        """
        body = b"\n".join(batch) + b"\n"
        headers = {"Content-Type": "application/x-ndjson", "User-Agent": "crawlkeeper-scrapy/" + __version__}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        attempt = 0
        while True:
            req = urllib.request.Request(self.endpoint, data=body, headers=headers, method="POST")
            retry_after = None
            try:
                with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                    return json.loads(resp.read() or b"{}")
            except urllib.error.HTTPError as exc:
                raw = exc.read()
                try:
                    answer = json.loads(raw)
                except ValueError:
                    answer = {}
                if not isinstance(answer, dict):
                    answer = {}
                if exc.code == 400 and "read" in answer:
                    return answer
                message = (answer.get("error") or {}).get("message") or answer.get("stopped") or raw[:200].decode("utf-8", "replace")
                if exc.code != 429 and exc.code < 500:
                    raise _Rejected(exc.code, "HTTP %d: %s" % (exc.code, message))
                error = "HTTP %d: %s" % (exc.code, message)
                retry_after = exc.headers.get("Retry-After") if exc.headers else None
            except (urllib.error.URLError, OSError) as exc:
                error = str(exc)
            if attempt >= self.retries or self.abort.is_set():
                raise RuntimeError(error)
            delay = min(self.max_backoff, self.backoff * (2 ** attempt))
            delay = delay / 2 + random.uniform(0, delay / 2)
            if retry_after and retry_after.isdigit():
                delay = max(delay, min(float(retry_after), self.max_backoff))
            attempt += 1
            self._count("retries")
            logger.info("crawlkeeper: %s; retry %d of %d in %.1fs", error, attempt, self.retries, delay)
            # abort.wait ends the wait early when the crawl shuts down.
            if self.abort.wait(delay):
                raise RuntimeError(error)


class NextError(Exception):
    """crawlkeeper could not answer what to fetch next; the message says why."""


def next_items(url, source, budget=None, limit=100, round=None, fill=False, token=None, timeout=30.0):
    """Asks crawlkeeper's recrawl advisor what to fetch now.

    Returns the advisor's items (``GET /api/v1/next``), best first: dicts
    with ``name`` (the page to fetch: the target its crawler named, or its
    URL), ``reason`` (never_fetched, event_near, source_prior or
    likely_changed), ``id`` (0 for a page never fetched), ``stale`` and
    more. ``budget`` is the crawl's budget, such as ``"20000/day"`` or a
    number of fetches per day (None: the source's pace over the last 24
    hours); ``round`` puts that round's targets with no record first;
    ``token`` needs the read scope. Raises NextError with the server's
    message when it refuses.
    """
    parsed = urllib.parse.urlparse(url or "")
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise ValueError("CRAWLKEEPER_URL %r: use the server's base URL, such as http://127.0.0.1:8080" % url)
    params = {"source": source or "", "limit": str(int(limit))}
    if budget not in (None, ""):
        params["budget"] = str(budget)
    if round not in (None, ""):
        params["round"] = str(round)
    if fill:
        params["fill"] = "true"
    req = urllib.request.Request(url.rstrip("/") + "/api/v1/next?" + urllib.parse.urlencode(params),
                                 headers={"Accept": "application/json"})
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as resp:
            plan = json.loads(resp.read().decode("utf-8"))
    except urllib.error.HTTPError as exc:
        body = exc.read().decode("utf-8", "replace")
        try:
            message = json.loads(body).get("error", {}).get("message") or body
        except (ValueError, AttributeError):
            message = body
        raise NextError("crawlkeeper next: %d %s" % (exc.code, message.strip())) from None
    except (urllib.error.URLError, OSError) as exc:
        raise NextError("crawlkeeper next: cannot reach %s: %s" % (url, exc)) from None
    logger.info("crawlkeeper: the advisor lists %d pages of source %s (%d due, budget %.0f/day, fresh now %.0f%%)",
                len(plan.get("items") or []), plan.get("source"), plan.get("due", 0),
                plan.get("budget_per_day", 0), 100 * plan.get("fresh_now", 0))
    return plan.get("items") or []


class NextRequestsMixin:
    """Spider mixin whose start requests are what crawlkeeper's advisor ranks
    first for the spider's source (``GET /api/v1/next``).

    Settings: CRAWLKEEPER_URL; CRAWLKEEPER_READ_TOKEN (a token with the read
    scope; defaults to CRAWLKEEPER_TOKEN); CRAWLKEEPER_SOURCE (defaults to
    the spider's name, as the pipeline does); CRAWLKEEPER_NEXT_BUDGET (like
    "20000/day"; default: the source's pace over the last 24 hours);
    CRAWLKEEPER_NEXT_LIMIT (default 100); CRAWLKEEPER_NEXT_FILL; and
    CRAWLKEEPER_ROUND, whose targets never fetched come first. Each request
    carries the advisor's item in ``meta["crawlkeeper_next"]`` and goes to
    ``self.parse`` unless the spider sets ``next_callback``.
    """

    next_callback = None

    def start_requests(self):
        s = self.settings
        rnd = getattr(self, "crawlkeeper_round", None) or s.get("CRAWLKEEPER_ROUND")
        items = next_items(
            s.get("CRAWLKEEPER_URL"),
            s.get("CRAWLKEEPER_SOURCE") or self.name,
            budget=s.get("CRAWLKEEPER_NEXT_BUDGET"),
            limit=s.getint("CRAWLKEEPER_NEXT_LIMIT", 100),
            round=rnd,
            fill=s.getbool("CRAWLKEEPER_NEXT_FILL", False),
            token=s.get("CRAWLKEEPER_READ_TOKEN") or s.get("CRAWLKEEPER_TOKEN"),
            timeout=s.getfloat("CRAWLKEEPER_TIMEOUT", DEFAULTS["CRAWLKEEPER_TIMEOUT"]),
        )
        callback = self.next_callback or self.parse
        for item in items:
            req = self.next_request(item, callback)
            if req is not None:
                yield req

    def next_request(self, item, callback):
        """The request for one of the advisor's items, or None to skip it.

        A record's page is its ``url``; a target never fetched has only its
        ``name``. A name that is not an http(s) URL (a company, a search
        term) is skipped with a warning: a spider whose targets are such
        names overrides this method to build their requests.
        """
        url = item.get("url") or item["name"]
        if not url.startswith(("http://", "https://")):
            logger.warning("crawlkeeper: the advisor's %r is not a URL; override next_request to fetch it", url)
            return None
        # A page the advisor proposes is due whatever Scrapy fetched
        # before in this process: no duplicate filter.
        return scrapy.Request(url, callback=callback, dont_filter=True, meta={"crawlkeeper_next": item})
