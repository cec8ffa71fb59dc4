package canon

import (
	"bytes"
	"sync"
)

// DefaultDropParams are the query parameters removed from every URL before
// it becomes part of a key: they say how a visitor arrived, not which page
// it is. A name ending in '*' is a prefix; names are compared without
// regard to ASCII case.
//
// Where the list comes from:
//   - npm's normalize-url removes /^utm_\w+/i by default: the utm_* family.
//   - The ClearURLs rule set's "globalRules" provider (the parameters it
//     removes on every site): click ids of Google (gclid, gclsrc, dclid,
//     gbraid, wbraid, srsltid), Microsoft (msclkid), Meta (fbclid,
//     fb_action_ids, fb_action_types, fb_source, fb_ref, igshid, igsh),
//     X/Twitter (twclid, __twitter_impression), Yandex (yclid, _openstat);
//     mailing-list and marketing-automation ids of Mailchimp (mc_cid, mc_eid,
//     mc_tc), HubSpot (_hsenc, __hssc, __hstc, __hsfp, hsctatracking, hsa_*),
//     Marketo (mkt_tok), Vero (vero_id, vero_conv), Olytics (oly_*: oly_anon_id,
//     oly_enc_id), MailerLite (ml_subscriber, ml_subscriber_hash); analytics
//     ids (_ga, _gl, ga_*, itm_*, hmb_*, otm_*, s_cid, wt_mc, wt_zmc,
//     os_ehash, rb_clickid, wickedid, _branch_match_id, action_*_map, gs_l).
//   - Click ids of other ad networks that crawled links carry: TikTok
//     (ttclid), LinkedIn (li_fat_id), HubSpot (_hsmi), Google Ads
//     (gad_source), Yandex (ysclid), and Matomo's campaign parameters
//     (mtm_*, pk_campaign, pk_kwd, pk_source, pk_medium, pk_content).
//   - Share parameters that big platforms add to the links of other sites
//     when they are shared or embedded, under names no site uses for a
//     page: X/Twitter's embedded-tweet and share-button links (ref_src,
//     ref_url: "?ref_src=twsrc%5Etfw"), links shared from Facebook's app
//     (mibextid), Pinterest's and Snapchat's click ids (epik, sccid),
//     Reddit's ad click id (rdt_cid) and Branch's app links
//     (_branch_referrer).
//
// w3lib's canonicalize_url removes no parameters by itself (its
// url_query_cleaner takes a list from the caller); its rules for sorting
// and encoding are the model for the query rules in this package.
//
// Left out on purpose: generic names that ClearURLs also removes but that
// are meaningful on many sites, such as ref, source, from, share, trk,
// spm, campaign_id and cmpid. A source drops them with drop_params.
//
// Changing this list changes keys: it is part of the key-rules fingerprint.
var DefaultDropParams = []string{
	// Campaign parameters.
	"utm_*", "mtm_*", "pk_campaign", "pk_kwd", "pk_source", "pk_medium", "pk_content",
	"itm_*", "hmb_*", "otm_*", "ga_*",
	// Google.
	"gclid", "gclsrc", "dclid", "gbraid", "wbraid", "gad_source", "srsltid", "_ga", "_gl", "gs_l",
	// Microsoft.
	"msclkid",
	// Meta.
	"fbclid", "fb_action_ids", "fb_action_types", "fb_source", "fb_ref",
	"action_object_map", "action_type_map", "action_ref_map", "igshid", "igsh",
	// X/Twitter, TikTok, LinkedIn, Yandex.
	"twclid", "__twitter_impression", "ttclid", "li_fat_id", "yclid", "ysclid", "_openstat",
	// Share parameters of big platforms on other sites' links.
	"ref_src", "ref_url", "mibextid", "epik", "sccid", "rdt_cid", "_branch_referrer",
	// Mailing lists and marketing automation.
	"mc_cid", "mc_eid", "mc_tc", "_hsenc", "_hsmi", "__hssc", "__hstc", "__hsfp", "hsctatracking", "hsa_*",
	"mkt_tok", "vero_id", "vero_conv", "oly_*", "ml_subscriber", "ml_subscriber_hash",
	// Other analytics.
	"s_cid", "wt_mc", "wt_zmc", "os_ehash", "rb_clickid", "wickedid", "_branch_match_id",
}

// PlatformDropParams are the share and tracking parameters of big
// platforms on their own pages, dropped only on the platform's host and
// its subdomains (a key of "x.com" covers "mobile.x.com" but not
// "box.com"). There they never name a page, while on other sites the same
// short names often do: "s" is WordPress's search, "t" a time, "ref" and
// "source" a section, "si" a site id. Written like DefaultDropParams,
// lower-case; a source's keep_params exempts a name here too.
//
// Where the lists come from: the platforms' share links as their apps and
// share buttons write them (X: "?s=46&t=...", YouTube: "?si=...",
// LinkedIn jobs: "?refId=...&trackingId=...&trk=public_jobs_topcard-title",
// Reddit: "?share_id=...", TikTok: "?is_from_webapp=1&sender_device=pc",
// Yahoo's consent redirect: "?guccounter=1&guce_referrer=..."), checked
// against the ClearURLs rule set's providers for the same hosts.
//
// Changing these lists changes keys: they are part of the key-rules
// fingerprint.
var PlatformDropParams = map[string][]string{
	// X/Twitter: share source and token, embed and widget referrers.
	"twitter.com": {"s", "t", "src", "ref_src", "ref_url", "cn"},
	"x.com":       {"s", "t", "src", "ref_src", "ref_url", "cn"},
	// YouTube: share id, share feature, search and channel trackers. The
	// video (v), playlist (list, index) and start time (t) stay.
	"youtube.com": {"si", "feature", "pp", "ab_channel", "embeds_referring_euri", "embeds_euri", "source_ve_path"},
	"youtu.be":    {"si", "feature", "pp"},
	// Facebook: click and surface trackers, share links.
	"facebook.com": {"__tn__", "__cft__*", "__xts__*", "rdid", "share_url", "sfnsn", "extid", "fref", "hc_ref", "hc_location", "ref", "refsrc", "eid", "paipv", "acontext", "comment_tracking", "notif_id", "notif_t"},
	"fb.watch":     {"rdid", "mibextid"},
	// Instagram's share ids are in DefaultDropParams (igsh, igshid).
	// LinkedIn: job and post links carry the search that found them.
	"linkedin.com": {"trk*", "trackingid", "refid", "lipi", "lici", "midtoken", "midsig", "eid", "originalsubdomain", "rcm", "original_referer"},
	// TikTok: share and device trackers.
	"tiktok.com": {"_r", "_t", "_d", "is_from_webapp", "sender_device", "is_copy_url", "share_app_id", "share_app_name", "share_link_id", "share_item_id", "share_iid", "tt_from", "u_code", "timestamp", "user_id", "sec_user_id", "preview_pb", "checksum", "social_sharing", "web_id", "refer", "enter_from", "enter_method", "source"},
	// Reddit: share ids and referrers.
	"reddit.com": {"share_id", "ref", "ref_source", "ref_campaign", "rdt", "correlation_id"},
	// Spotify: share id and the context it was shared from.
	"spotify.com": {"si", "nd", "dlsi", "context"},
	// Pinterest and Threads share links.
	"pinterest.com": {"invite_code", "sender", "sfo"},
	"threads.net":   {"xmt", "slof"},
	"threads.com":   {"xmt", "slof"},
	// Medium and Substack: referral and share trackers.
	"medium.com":   {"source", "sk"},
	"substack.com": {"r", "s", "triedredirect", "showwelcome", "isfreemail"},
	// News portals: MSN's partner and click ids, Yahoo's consent redirect.
	"msn.com":   {"ocid", "cvid", "ei", "pc"},
	"yahoo.com": {"guccounter", "guce_referrer", "guce_referrer_sig", "soc_src", "soc_trk", "tsrc"},
}

// platformSets is PlatformDropParams as parameter sets, built on first
// use.
var platformSets = sync.OnceValue(func() map[string]*paramSet {
	m := make(map[string]*paramSet, len(PlatformDropParams))
	for host, names := range PlatformDropParams {
		s := &paramSet{}
		for _, n := range names {
			s.add(n)
		}
		m[host] = s
	}
	return m
})

// platformFor returns the platform parameters of a canonical host, or
// nil: the entry of the host itself or of the nearest parent domain.
func platformFor(host []byte) *paramSet {
	if len(host) == 0 {
		return nil
	}
	sets := platformSets()
	for {
		if s, ok := sets[string(host)]; ok {
			return s
		}
		i := bytes.IndexByte(host, '.')
		if i < 0 {
			return nil
		}
		host = host[i+1:]
	}
}
