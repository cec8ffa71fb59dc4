"""Tests of the crawlkeeper Scrapy pipeline against local HTTP servers.

Run with the Python that has Scrapy (Debian: /usr/bin/python3):

    /usr/bin/python3 -m unittest discover -s integrations/scrapy -v
"""

import datetime
import http.server
import json
import threading
import time
import unittest
import urllib.parse

from scrapy import Item, Field, Spider
from scrapy.utils.test import get_crawler

from crawlkeeper_scrapy import CrawlkeeperPipeline, NextError, NextRequestsMixin, next_items


class Recorder(http.server.ThreadingHTTPServer):
    """A fake crawlkeeper: answers with a scripted list of statuses (then 200)
    and records every request; `gate`, when set, holds answers until set."""

    daemon_threads = True

    def __init__(self, script=(), gate=None):
        super().__init__(("127.0.0.1", 0), Handler)
        self.script = list(script)
        self.gate = gate
        self.requests = []
        self.lock = threading.Lock()
        threading.Thread(target=self.serve_forever, daemon=True).start()

    @property
    def url(self):
        return "http://127.0.0.1:%d" % self.server_address[1]

    def close(self):
        if self.gate is not None:
            self.gate.set()
        self.shutdown()
        self.server_close()


class Handler(http.server.BaseHTTPRequestHandler):
    def log_message(self, *args):
        pass

    def do_GET(self):
        # GET /api/v1/next: answers the server's scripted `next_answer`
        # (status, body).
        srv = self.server
        with srv.lock:
            srv.requests.append((self.path, dict(self.headers), b""))
            status, answer = getattr(srv, "next_answer", (404, {"error": {"code": "not_found", "message": "no answer"}}))
        data = json.dumps(answer).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        body = self.rfile.read(int(self.headers["Content-Length"]))
        srv = self.server
        with srv.lock:
            srv.requests.append((self.path, dict(self.headers), body))
            status = srv.script.pop(0) if srv.script else 200
        if srv.gate is not None:
            srv.gate.wait(30)
        items = [json.loads(line) for line in body.decode().splitlines() if line]
        if status == 200:
            answer = {"read": len(items), "inserted": len(items), "changed": 0, "unchanged": 0, "rejected": 0, "errors": []}
        elif status == 400:
            answer = {"read": len(items), "inserted": len(items) - 1, "changed": 0, "unchanged": 0, "rejected": 1,
                      "errors": [{"line": 1, "error": "metadata _round must be an integer or a string"}]}
        else:
            answer = {"error": {"code": "unavailable" if status >= 500 else "unauthorized", "message": "scripted %d" % status}}
        data = json.dumps(answer).encode()
        try:
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the pipeline gave up waiting (the slow-server test)


class Page(Item):
    title = Field()
    url = Field()
    seen = Field()


class ReferenceSpider(Spider):
    name = "reference"


def make_pipeline(server, **settings):
    base = {
        "CRAWLKEEPER_URL": server.url,
        "CRAWLKEEPER_TOKEN": "tok",
        "CRAWLKEEPER_BACKOFF": 0.01,
        "CRAWLKEEPER_FLUSH_INTERVAL": 0.05,
    }
    base.update(settings)
    crawler = get_crawler(ReferenceSpider, settings_dict=base)
    crawler.spider = crawler._create_spider()
    pipe = CrawlkeeperPipeline.from_crawler(crawler)
    pipe.open_spider(crawler.spider)
    return pipe, crawler


def sent_items(server):
    out = []
    for _, _, body in server.requests:
        out.extend(json.loads(line) for line in body.decode().splitlines())
    return out


class PipelineTest(unittest.TestCase):
    def test_batches_carry_source_round_target_and_token(self):
        server = Recorder()
        self.addCleanup(server.close)
        pipe, crawler = make_pipeline(server, CRAWLKEEPER_BATCH=2, CRAWLKEEPER_ROUND="7", CRAWLKEEPER_TARGET_FIELD="url")
        when = datetime.datetime(2026, 3, 1, 12, 0)
        for i in range(5):
            item = Page(title="Page %d" % i, url="http://site.example/%d" % i, seen=when)
            self.assertIs(pipe.process_item(item, crawler.spider), item)
        pipe.close_spider(crawler.spider)

        self.assertEqual(len(server.requests), 3)  # 2 + 2 + 1
        path, headers, _ = server.requests[0]
        query = urllib.parse.parse_qs(urllib.parse.urlparse(path).query)
        self.assertEqual(urllib.parse.urlparse(path).path, "/api/v1/items")
        self.assertEqual(query, {"source": ["reference"], "round": ["7"]})
        self.assertEqual(headers["Authorization"], "Bearer tok")
        self.assertEqual(headers["Content-Type"], "application/x-ndjson")
        items = sent_items(server)
        self.assertEqual([it["title"] for it in items], ["Page %d" % i for i in range(5)])
        self.assertEqual(items[3]["_target"], "http://site.example/3")
        self.assertEqual(items[0]["seen"], "2026-03-01T12:00:00")
        c = pipe.snapshot()
        self.assertEqual((c["sent"], c["inserted"], c["dropped"], c["failed"], c["batches"]), (5, 5, 0, 0, 3))
        self.assertEqual(crawler.stats.get_value("crawlkeeper/sent"), 5)

    def test_spider_argument_round_wins(self):
        server = Recorder()
        self.addCleanup(server.close)
        crawler = get_crawler(ReferenceSpider, settings_dict={"CRAWLKEEPER_URL": server.url, "CRAWLKEEPER_ROUND": "1", "CRAWLKEEPER_FLUSH_INTERVAL": 0.01})
        spider = ReferenceSpider(crawlkeeper_round="2")
        pipe = CrawlkeeperPipeline.from_crawler(crawler)
        pipe.open_spider(spider)
        pipe.process_item({"title": "a", "url": "http://a/"}, spider)
        pipe.close_spider(spider)
        self.assertIn("round=2", server.requests[0][0])

    def test_retries_on_503_and_429(self):
        server = Recorder(script=[503, 429, 502])
        self.addCleanup(server.close)
        pipe, crawler = make_pipeline(server, CRAWLKEEPER_RETRIES=5)
        pipe.process_item({"title": "a", "url": "http://a/"}, crawler.spider)
        pipe.close_spider(crawler.spider)
        self.assertEqual(len(server.requests), 4)
        bodies = {body for _, _, body in server.requests}
        self.assertEqual(len(bodies), 1, "every attempt sends the same batch")
        c = pipe.snapshot()
        self.assertEqual((c["sent"], c["retries"], c["failed"]), (1, 3, 0))

    def test_gives_up_after_the_retries(self):
        server = Recorder(script=[503] * 10)
        self.addCleanup(server.close)
        pipe, crawler = make_pipeline(server, CRAWLKEEPER_RETRIES=2)
        pipe.process_item({"title": "a"}, crawler.spider)
        pipe.close_spider(crawler.spider)
        self.assertEqual(len(server.requests), 3)
        self.assertEqual(pipe.snapshot()["failed"], 1)

    def test_client_errors_are_not_retried(self):
        server = Recorder(script=[401])
        self.addCleanup(server.close)
        pipe, crawler = make_pipeline(server, CRAWLKEEPER_RETRIES=5)
        pipe.process_item({"title": "a"}, crawler.spider)
        pipe.process_item({"title": "b"}, crawler.spider)
        pipe.close_spider(crawler.spider)
        self.assertEqual(len(server.requests), 1)
        self.assertEqual(pipe.snapshot()["failed"], 2)

    def test_rejected_items_are_counted(self):
        server = Recorder(script=[400])
        self.addCleanup(server.close)
        pipe, crawler = make_pipeline(server)
        for i in range(3):
            pipe.process_item({"title": str(i)}, crawler.spider)
        pipe.close_spider(crawler.spider)
        c = pipe.snapshot()
        self.assertEqual((c["sent"], c["rejected"], c["failed"]), (2, 1, 0))

    def test_a_slow_server_never_blocks_the_crawl(self):
        gate = threading.Event()
        server = Recorder(gate=gate)
        self.addCleanup(server.close)
        pipe, crawler = make_pipeline(server, CRAWLKEEPER_BATCH=2, CRAWLKEEPER_QUEUE_SIZE=3,
                                      CRAWLKEEPER_CLOSE_TIMEOUT=0.5, CRAWLKEEPER_TIMEOUT=2)
        start = time.monotonic()
        for i in range(100):
            pipe.process_item({"title": str(i)}, crawler.spider)
        elapsed = time.monotonic() - start
        self.assertLess(elapsed, 1.0, "process_item waited for the server")
        # At most the queue plus one batch in the sender's hands got through.
        self.assertGreaterEqual(pipe.snapshot()["dropped"], 100 - 3 - 2)

        start = time.monotonic()
        pipe.close_spider(crawler.spider)
        self.assertLess(time.monotonic() - start, 5, "close_spider outlived its timeouts")
        gate.set()
        c = pipe.snapshot()
        self.assertEqual(c["sent"] + c["failed"] + c["dropped"], 100, c)
        self.assertEqual(crawler.stats.get_value("crawlkeeper/dropped"), c["dropped"])

    def test_not_configured_without_url(self):
        from scrapy.exceptions import NotConfigured
        with self.assertRaises(NotConfigured):
            CrawlkeeperPipeline.from_crawler(get_crawler(ReferenceSpider, settings_dict={}))
        with self.assertRaises(ValueError):
            CrawlkeeperPipeline(url="127.0.0.1:8080")



PLAN = {
    "source": "reference", "budget_per_day": 2400, "due": 2, "fresh_now": 0.8,
    "items": [
        {"name": "http://site.example/new", "reason": "never_fetched", "due": True},
        {"name": "http://site.example/7", "id": 7, "reason": "likely_changed", "due": True, "stale": 0.6},
        {"name": "acme", "id": 8, "url": "http://site.example/acme", "reason": "likely_changed", "due": True},
        {"name": "globex", "reason": "never_fetched", "due": True},
    ],
}


class NextSpider(NextRequestsMixin, Spider):
    name = "reference"

    def parse(self, response):
        pass


class NextTest(unittest.TestCase):
    def test_next_items_sends_the_query_and_the_read_token(self):
        server = Recorder()
        self.addCleanup(server.close)
        server.next_answer = (200, PLAN)
        items = next_items(server.url + "/", "reference", budget="100/hour", limit=2, round="9", token="reader")
        self.assertEqual([it["name"] for it in items], ["http://site.example/new", "http://site.example/7", "acme", "globex"])
        path, headers, _ = server.requests[0]
        u = urllib.parse.urlparse(path)
        self.assertEqual(u.path, "/api/v1/next")
        self.assertEqual(urllib.parse.parse_qs(u.query), {"source": ["reference"], "limit": ["2"], "budget": ["100/hour"], "round": ["9"]})
        self.assertEqual(headers["Authorization"], "Bearer reader")

    def test_next_items_raises_the_servers_message(self):
        server = Recorder()
        self.addCleanup(server.close)
        server.next_answer = (400, {"error": {"code": "invalid", "message": "source \"x\" had no deliveries"}})
        with self.assertRaises(NextError) as cm:
            next_items(server.url, "x")
        self.assertIn("400", str(cm.exception))
        self.assertIn("had no deliveries", str(cm.exception))
        with self.assertRaises(ValueError):
            next_items("127.0.0.1:8080", "x")

    def test_mixin_yields_the_advisors_pages_unfiltered(self):
        server = Recorder()
        self.addCleanup(server.close)
        server.next_answer = (200, PLAN)
        crawler = get_crawler(NextSpider, settings_dict={
            "CRAWLKEEPER_URL": server.url, "CRAWLKEEPER_TOKEN": "ingest", "CRAWLKEEPER_READ_TOKEN": "reader",
            "CRAWLKEEPER_NEXT_BUDGET": "2400/day", "CRAWLKEEPER_NEXT_LIMIT": 5, "CRAWLKEEPER_NEXT_FILL": True})
        spider = crawler._create_spider()
        reqs = list(spider.start_requests())
        # A record's URL is fetched rather than its target's name; a
        # target that is no URL is left to the spider's next_request.
        self.assertEqual([r.url for r in reqs], ["http://site.example/new", "http://site.example/7", "http://site.example/acme"])
        self.assertTrue(all(r.dont_filter for r in reqs))
        self.assertEqual(reqs[1].meta["crawlkeeper_next"]["id"], 7)
        self.assertEqual(reqs[0].callback, spider.parse)
        path, headers, _ = server.requests[0]
        q = urllib.parse.parse_qs(urllib.parse.urlparse(path).query)
        self.assertEqual(q, {"source": ["reference"], "limit": ["5"], "budget": ["2400/day"], "fill": ["true"]})
        self.assertEqual(headers["Authorization"], "Bearer reader")


if __name__ == "__main__":
    unittest.main()
