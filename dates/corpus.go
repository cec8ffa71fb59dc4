package dates

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

// MixedCorpus returns n date strings shaped like what crawlers deliver:
// mostly machine formats, then English and other languages' named-month
// and numeric dates, CJK dates, relative dates, ranges, a little text that
// is not a date and a little of the long tail only the fallback reads.
// Strings repeat as they do in crawls, where the same items are fetched
// again and again: the corpus draws from a pool of a quarter of n distinct
// strings, the first ones more often than the rest. The same n and seed
// give the same corpus.
func MixedCorpus(n int, seed int64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x6372617768))
	base := time.Date(2024, 5, 15, 0, 0, 0, 0, time.UTC)
	pool := make([]string, max(n/4, 1))
	for i := range pool {
		t := base.AddDate(0, 0, r.IntN(120)-60).Add(time.Duration(r.IntN(96)) * 15 * time.Minute)
		pool[i] = corpusString(r, t)
	}
	out := make([]string, n)
	for i := range out {
		u := r.Float64()
		out[i] = pool[int(u*u*float64(len(pool)))]
	}
	return out
}

var (
	corpusMonthsDE = [12]string{"Januar", "Februar", "März", "April", "Mai", "Juni", "Juli", "August", "September", "Oktober", "November", "Dezember"}
	corpusMonthsFR = [12]string{"janvier", "février", "mars", "avril", "mai", "juin", "juillet", "août", "septembre", "octobre", "novembre", "décembre"}
	corpusMonthsES = [12]string{"enero", "febrero", "marzo", "abril", "mayo", "junio", "julio", "agosto", "septiembre", "octubre", "noviembre", "diciembre"}
	corpusMonthsRU = [12]string{"января", "февраля", "марта", "апреля", "мая", "июня", "июля", "августа", "сентября", "октября", "ноября", "декабря"}
	corpusMonthsPL = [12]string{"stycznia", "lutego", "marca", "kwietnia", "maja", "czerwca", "lipca", "sierpnia", "września", "października", "listopada", "grudnia"}
	corpusMonthsIT = [12]string{"gennaio", "febbraio", "marzo", "aprile", "maggio", "giugno", "luglio", "agosto", "settembre", "ottobre", "novembre", "dicembre"}
	corpusMonthsTR = [12]string{"Ocak", "Şubat", "Mart", "Nisan", "Mayıs", "Haziran", "Temmuz", "Ağustos", "Eylül", "Ekim", "Kasım", "Aralık"}
	corpusMonthsAR = [12]string{"يناير", "فبراير", "مارس", "أبريل", "مايو", "يونيو", "يوليو", "أغسطس", "سبتمبر", "أكتوبر", "نوفمبر", "ديسمبر"}
	corpusMonthsHI = [12]string{"जनवरी", "फ़रवरी", "मार्च", "अप्रैल", "मई", "जून", "जुलाई", "अगस्त", "सितंबर", "अक्टूबर", "नवंबर", "दिसंबर"}

	corpusRelative = []string{"today", "yesterday", "2 hours ago", "3 days ago", "a week ago", "gestern", "vor 2 Tagen", "hier",
		"il y a 3 jours", "ayer", "hace 2 días", "ieri", "вчера", "3 дня назад", "wczoraj", "dün", "昨日", "3日前", "昨天", "2天前",
		"어제", "3일 전", "last Friday", "in 2 weeks", "just now", "1 hour ago"}
	corpusJunk = []string{"N/A", "TBD", "", "rolling", "ASAP", "see website", "Open until filled", "-", "Ongoing"}
	// The long tail: languages the tables do not cover, read by the fallback.
	corpusTail = []string{"15 maj 2024 kl. 10:30", "15. května 2024", "15 Οκτωβρίου 2024", "15 tháng 5 năm 2024", "15 ตุลาคม 2567",
		"15 toukokuuta 2024", "2024. május 15.", "15 mai 2024 m.", "15 травня 2024", "15 Mei 2024 pukul 10.30"}
)

func corpusString(r *rand.Rand, t time.Time) string {
	y, mo, d := t.Date()
	m := int(mo) - 1
	switch x := r.IntN(1000); {
	case x < 250:
		return t.Format(time.RFC3339)
	case x < 320:
		return t.In(time.FixedZone("", 9*3600)).Format("2006-01-02T15:04:05-07:00")
	case x < 400:
		return t.Format("2006-01-02")
	case x < 460:
		return t.Format(time.RFC1123)
	case x < 480:
		return t.Format(time.RFC1123Z)
	case x < 530:
		return t.Format("January 2, 2006")
	case x < 560:
		return t.Format("2 Jan 2006")
	case x < 580:
		return t.Format("Monday, January 2, 2006 3:04 PM")
	case x < 610:
		return t.Format("02.01.2006")
	case x < 630:
		return t.Format("01/02/2006")
	case x < 645:
		return t.Format("2006/01/02 15:04")
	case x < 665:
		return fmt.Sprintf("%d. %s %d", d, corpusMonthsDE[m], y)
	case x < 680:
		return fmt.Sprintf("%d %s %d", d, corpusMonthsFR[m], y)
	case x < 695:
		return fmt.Sprintf("%d de %s de %d", d, corpusMonthsES[m], y)
	case x < 710:
		return fmt.Sprintf("%d %s %d г.", d, corpusMonthsRU[m], y)
	case x < 720:
		return fmt.Sprintf("%d %s %d", d, corpusMonthsPL[m], y)
	case x < 730:
		return fmt.Sprintf("%d %s %d", d, corpusMonthsIT[m], y)
	case x < 740:
		return fmt.Sprintf("%d %s %d", d, corpusMonthsTR[m], y)
	case x < 770:
		return fmt.Sprintf("%d年%d月%d日", y, m+1, d)
	case x < 785:
		return t.Format("2006年01月02日 15時04分")
	case x < 795:
		return fmt.Sprintf("令和%d年%d月%d日", y-2018, m+1, d)
	case x < 815:
		return fmt.Sprintf("%d년 %d월 %d일", y, m+1, d)
	case x < 825:
		return fmt.Sprintf("%s %s %s", arabicDigits(d), corpusMonthsAR[m], arabicDigits(y))
	case x < 832:
		return fmt.Sprintf("%d %s %d", d, corpusMonthsHI[m], y)
	case x < 900:
		return corpusRelative[r.IntN(len(corpusRelative))]
	case x < 915:
		e := t.AddDate(0, 0, 2)
		if e.Month() != t.Month() {
			return fmt.Sprintf("%s %d – %s %d, %d", t.Format("January"), d, e.Format("January"), e.Day(), y)
		}
		return fmt.Sprintf("%s %d–%d, %d", t.Format("January"), d, e.Day(), y)
	case x < 925:
		e := t.AddDate(0, 0, 1)
		return fmt.Sprintf("%d/%d/%d～%d/%d", y, m+1, d, int(e.Month()), e.Day())
	case x < 945:
		return strconv.FormatInt(t.Unix(), 10)
	case x < 980:
		return corpusJunk[r.IntN(len(corpusJunk))]
	default:
		return corpusTail[r.IntN(len(corpusTail))]
	}
}

// arabicDigits writes n with Arabic-Indic digits.
func arabicDigits(n int) string {
	s := []rune(strconv.Itoa(n))
	for i, c := range s {
		s[i] = c - '0' + 0x0660
	}
	return string(s)
}

// Month names in languages the tables do not know, in the case dates use.
var (
	fallbackMonthsCS = [12]string{"ledna", "února", "března", "dubna", "května", "června", "července", "srpna", "září", "října", "listopadu", "prosince"}
	fallbackMonthsEL = [12]string{"Ιανουαρίου", "Φεβρουαρίου", "Μαρτίου", "Απριλίου", "Μαΐου", "Ιουνίου", "Ιουλίου", "Αυγούστου", "Σεπτεμβρίου", "Οκτωβρίου", "Νοεμβρίου", "Δεκεμβρίου"}
	fallbackMonthsFI = [12]string{"tammikuuta", "helmikuuta", "maaliskuuta", "huhtikuuta", "toukokuuta", "kesäkuuta", "heinäkuuta", "elokuuta", "syyskuuta", "lokakuuta", "marraskuuta", "joulukuuta"}
	fallbackMonthsHU = [12]string{"január", "február", "március", "április", "május", "június", "július", "augusztus", "szeptember", "október", "november", "december"}
	fallbackMonthsUK = [12]string{"січня", "лютого", "березня", "квітня", "травня", "червня", "липня", "серпня", "вересня", "жовтня", "листопада", "грудня"}
	fallbackMonthsRO = [12]string{"ianuarie", "februarie", "martie", "aprilie", "mai", "iunie", "iulie", "august", "septembrie", "octombrie", "noiembrie", "decembrie"}
	fallbackMonthsID = [12]string{"Januari", "Februari", "Maret", "April", "Mei", "Juni", "Juli", "Agustus", "September", "Oktober", "November", "Desember"}
	fallbackMonthsHR = [12]string{"siječnja", "veljače", "ožujka", "travnja", "svibnja", "lipnja", "srpnja", "kolovoza", "rujna", "listopada", "studenoga", "prosinca"}
	fallbackRelative = []string{"před %d dny", "pred %d hodinami", "πριν από %d ημέρες", "%d päivää sitten", "%d napja", "acum %d zile", "%d днів тому",
		"%d ngày trước", "%d hari yang lalu", "prije %d dana", "%d dager siden"}
)

// FallbackCorpus returns n date strings that only the fallback library
// reads: dates and relative phrases in languages the hand-written tables
// do not know (strings the tables happen to read are left out), drawn
// from a pool of n/10 distinct strings with the repeats crawls have. The
// same n and seed give the same corpus.
func FallbackCorpus(n int, seed int64) []string {
	r := rand.New(rand.NewPCG(uint64(seed), 0x66616c6c))
	base := time.Date(2024, 5, 15, 0, 0, 0, 0, time.UTC)
	hand := NewWithOptions(Options{NoFallback: true})
	o := crawlkeeper.DateOptions{Now: base}
	pool := make([]string, max(n/10, 1))
	for i := 0; i < len(pool); {
		t := base.AddDate(0, 0, r.IntN(400)-200)
		y, mo, d := t.Date()
		m := int(mo) - 1
		switch r.IntN(10) {
		case 0:
			pool[i] = fmt.Sprintf("%d. %s %d", d, fallbackMonthsCS[m], y)
		case 1:
			pool[i] = fmt.Sprintf("%d %s %d", d, fallbackMonthsEL[m], y)
		case 2:
			pool[i] = fmt.Sprintf("%d. %s %d", d, fallbackMonthsFI[m], y)
		case 3:
			pool[i] = fmt.Sprintf("%d. %s %d.", y, fallbackMonthsHU[m], d)
		case 4:
			pool[i] = fmt.Sprintf("%d %s %d р.", d, fallbackMonthsUK[m], y)
		case 5:
			pool[i] = fmt.Sprintf("%d %s %d", d, fallbackMonthsRO[m], y)
		case 6:
			pool[i] = fmt.Sprintf("%d %s %d", d, fallbackMonthsID[m], y)
		case 7:
			pool[i] = fmt.Sprintf("%d. %s %d.", d, fallbackMonthsHR[m], y)
		default:
			pool[i] = fmt.Sprintf(fallbackRelative[r.IntN(len(fallbackRelative))], 1+r.IntN(20))
		}
		if _, err := hand.ParseDate(pool[i], o); err != nil {
			i++
		}
	}
	out := make([]string, n)
	for i := range out {
		u := r.Float64()
		out[i] = pool[int(u*u*float64(len(pool)))]
	}
	return out
}
