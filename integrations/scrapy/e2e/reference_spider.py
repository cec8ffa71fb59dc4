"""A small real spider for the end-to-end test: it crawls a static copy of
Debian's reference manual (package debian-reference-en) and yields one item
per HTML page. e2e.sh copies it into the spiders/ folder of a project made
by `scrapy startproject`, whose settings.py enables the crawlkeeper
pipeline as a user's would."""

import urllib.parse

import scrapy
from scrapy.http import HtmlResponse


class ReferenceSpider(scrapy.Spider):
    name = "debian-reference"
    custom_settings = {
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
    }

    def __init__(self, start=None, **kwargs):
        super().__init__(**kwargs)
        if not start:
            raise ValueError("give the first page: scrapy crawl debian-reference -a start=http://127.0.0.1:PORT/index.en.html")
        self.start_urls = [start]
        self.allowed_domains = [urllib.parse.urlparse(start).hostname]

    def parse(self, response):
        if not isinstance(response, HtmlResponse):
            return
        text = " ".join(
            t.strip()
            for t in response.xpath("//body//text()[not(ancestor::script) and not(ancestor::style)]").getall()
            if t.strip()
        )
        yield {
            "title": " ".join(response.css("title::text").get("").split()),
            "url": response.url,
            "sections": [" ".join(h.split()) for h in response.css("h2").xpath("string()").getall()],
            "words": len(text.split()),
            "text": text,
            "scraped_at": response.headers.get("Date", b"").decode() or None,
        }
        for href in response.css("a::attr(href)").getall():
            if href.split("#")[0].endswith(".html"):
                yield response.follow(href, callback=self.parse)
