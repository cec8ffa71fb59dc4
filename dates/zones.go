package dates

import (
	"sync"
	"time"
)

// zone is a time zone abbreviation with the one offset it has in practice.
// Abbreviations name an offset, not a region with rules, so a fixed zone is
// the honest reading: "10:30 EST" is 15:30 UTC whatever the season. The
// North American region names (ET, PT) are the exception.
type zone struct {
	name   string
	off    int    // seconds east of UTC
	region string // an IANA zone whose rules the name follows, if any
}

// zoneTable lists the abbreviations sites print. Where an abbreviation is
// ambiguous the reading most common on the web wins: IST is India, CST is
// US Central, BST is British Summer Time.
var zoneTable = []zone{
	{name: "UTC"}, {name: "GMT"}, {name: "UT"}, {name: "Z"}, {name: "WET"},
	{name: "WEST", off: 3600}, {name: "BST", off: 3600}, {name: "IST", off: 19800},
	{name: "CET", off: 3600}, {name: "CEST", off: 7200}, {name: "MEZ", off: 3600}, {name: "MESZ", off: 7200},
	{name: "EET", off: 7200}, {name: "EEST", off: 10800}, {name: "MSK", off: 10800}, {name: "TRT", off: 10800},
	{name: "EST", off: -5 * 3600}, {name: "EDT", off: -4 * 3600}, {name: "CST", off: -6 * 3600}, {name: "CDT", off: -5 * 3600},
	{name: "MST", off: -7 * 3600}, {name: "MDT", off: -6 * 3600}, {name: "PST", off: -8 * 3600}, {name: "PDT", off: -7 * 3600},
	{name: "AKST", off: -9 * 3600}, {name: "AKDT", off: -8 * 3600}, {name: "HST", off: -10 * 3600},
	{name: "AST", off: -4 * 3600}, {name: "ADT", off: -3 * 3600}, {name: "NST", off: -3*3600 - 1800}, {name: "NDT", off: -2*3600 - 1800},
	{name: "JST", off: 9 * 3600}, {name: "KST", off: 9 * 3600}, {name: "HKT", off: 8 * 3600}, {name: "SGT", off: 8 * 3600},
	{name: "PHT", off: 8 * 3600}, {name: "AWST", off: 8 * 3600}, {name: "WIB", off: 7 * 3600}, {name: "ICT", off: 7 * 3600},
	{name: "AEST", off: 10 * 3600}, {name: "AEDT", off: 11 * 3600}, {name: "ACST", off: 9*3600 + 1800}, {name: "ACDT", off: 10*3600 + 1800},
	{name: "NZST", off: 12 * 3600}, {name: "NZDT", off: 13 * 3600}, {name: "PKT", off: 5 * 3600}, {name: "NPT", off: 5*3600 + 2700},
	{name: "GST", off: 4 * 3600}, {name: "IRST", off: 3*3600 + 1800}, {name: "SAST", off: 2 * 3600}, {name: "CAT", off: 2 * 3600},
	{name: "EAT", off: 3 * 3600}, {name: "WAT", off: 3600}, {name: "BRT", off: -3 * 3600}, {name: "ART", off: -3 * 3600},
	{name: "CLT", off: -4 * 3600}, {name: "COT", off: -5 * 3600}, {name: "PET", off: -5 * 3600},
	// North American sites write the region's time without saying
	// whether it is standard or daylight time: the region's rules decide.
	{name: "ET", off: -5 * 3600, region: "America/New_York"}, {name: "CT", off: -6 * 3600, region: "America/Chicago"},
	{name: "MT", off: -7 * 3600, region: "America/Denver"}, {name: "PT", off: -8 * 3600, region: "America/Los_Angeles"},
}

// zoneLocations are the locations of the zones: one per entry of
// zoneTable, and one fixed zone per quarter hour from -14:00 to +14:00, so
// that reading "+09:00" allocates nothing (unnamed, as the standard
// library's time.Parse makes them). They are built on first use: the
// North American regions read the zone database.
type zoneLocations struct {
	named   []*time.Location
	offsets [113]*time.Location
}

var zones = sync.OnceValue(func() *zoneLocations {
	z := &zoneLocations{named: make([]*time.Location, len(zoneTable))}
	for i := range z.offsets {
		z.offsets[i] = time.FixedZone("", (i-56)*900)
	}
	for i, e := range zoneTable {
		switch {
		case e.region != "":
			// Without the zone database, the standard offset.
			if loc, err := time.LoadLocation(e.region); err == nil {
				z.named[i] = loc
			} else {
				z.named[i] = time.FixedZone(e.name, e.off)
			}
		case e.off == 0:
			z.named[i] = time.UTC
		default:
			z.named[i] = time.FixedZone(e.name, e.off)
		}
	}
	markLoaded("zones")
	return z
})

// zoneLocation returns the location of zoneTable[i].
func zoneLocation(i int) *time.Location { return zones().named[i] }

// fixedZone returns a zone for an offset in seconds east of UTC.
func fixedZone(off int) *time.Location {
	if off == 0 {
		return time.UTC
	}
	if off%900 == 0 && off >= -56*900 && off <= 56*900 {
		return zones().offsets[off/900+56]
	}
	return time.FixedZone("", off)
}
