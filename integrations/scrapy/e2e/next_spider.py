"""The end-to-end test's recrawl spider: its start requests are what
crawlkeeper's advisor ranks first for the source (NextRequestsMixin, GET
/api/v1/next), and it follows no links, as a scheduled recrawl would."""

import scrapy
from scrapy.http import HtmlResponse

from crawlkeeper_scrapy import NextRequestsMixin


class ReferenceNextSpider(NextRequestsMixin, scrapy.Spider):
    name = "debian-reference-next"
    custom_settings = {
        "ROBOTSTXT_OBEY": False,
        "TELNETCONSOLE_ENABLED": False,
        "REQUEST_FINGERPRINTER_IMPLEMENTATION": "2.7",
        # The records were delivered by the spider "debian-reference".
        "CRAWLKEEPER_SOURCE": "debian-reference",
    }

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
