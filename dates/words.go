package dates

import (
	"strings"
	"sync"
	"unicode/utf8"
)

// kind is the role a word plays in a date.
type kind uint8

const (
	kNone       kind = iota
	kMonth           // a Gregorian month name; val is 1-12
	kJalali          // a month of the Persian solar calendar; val is 1-12
	kWeekday         // a weekday name; val is 0 (Sunday) to 6
	kFiller          // a word that carries no date information ("de", "of", "г.")
	kOrdinal         // a suffix that makes the number before it a day ("th", "er")
	kAMPM            // a meridiem marker; val 0 is am, 1 is pm
	kAMPMCtx         // a meridiem marker only right after a time, a filler elsewhere ("am" in German)
	kZone            // a zone abbreviation; val indexes zoneTable
	kRelDay          // a day relative to today; val is the offset in days
	kNow             // the present instant
	kUnit            // a unit of relative time; val is a unit constant
	kAgo             // comes after an amount in the past ("ago", "前")
	kLater           // comes after an amount in the future ("later", "後")
	kPrePast         // comes before an amount in the past ("vor", "hace")
	kPreFuture       // comes before an amount in the future ("in", "dans")
	kLast            // "last Monday", "lundi dernier"
	kNext            // "next Friday"
	kCount           // a number written as a word; val is its value
	kEra             // a Japanese era; val is the Gregorian year before its first year
	kMarkY           // CJK year marker after a number (年, 년)
	kMarkM           // CJK month marker (月, 월)
	kMarkD           // CJK day marker (日, 일, 号)
	kMarkH           // CJK hour marker (時, 点, 시)
	kMarkMin         // CJK minute marker (分, 분)
	kMarkS           // CJK second marker (秒, 초)
	kHalf            // "half past" in CJK hour forms (半)
	kHourWord        // a word that marks a number as an hour ("Uhr")
	kRangeSep        // separates the two ends of a range ("to", "bis", "至")
	kRangeStart      // introduces a range ("from", "vom"); ignored inside a date
	kThis            // "this week", "this Friday": the current one
	kPreY            // a year marker before its number (Tibetan ལོ, "སྤྱི་ལོ་2024")
	kPreM            // a month marker before its number (Tibetan ཟླ, "ཟླ་༥")
	kPreD            // a day marker before its number (Tibetan ཚེས, "ཚེས་15")
)

// Units of relative time.
const (
	uSecond = iota + 1
	uMinute
	uHour
	uDay
	uWeek
	uMonth
	uYear
	uDecade
	uCentury
)

// word is what the parser knows about one normalized word or phrase. A word
// may play two roles: "ago" is a month abbreviation in Spanish and the past
// marker in English, 日 is a day marker and a unit ("3日前").
type word struct {
	kind  kind
	val   int
	kind2 kind
	val2  int
	// weak marks a generated word that is read only with what confirms
	// it, since alone it is more often a word of another language: a unit
	// of the CLDR's relative patterns only with a direction ("antaŭ 3
	// tagoj", while "3 din" is a count), a short abbreviation of a month or
	// weekday ("Sad", "Sr") only in a complete date with a four-digit year.
	weak bool
}

func (w *word) is(k kind) bool { return w.kind == k || w.kind2 == k }

func (w *word) valOf(k kind) int {
	if w.kind == k {
		return w.val
	}
	return w.val2
}

// tables are the word tables the parser reads with. They are built on
// first use (wordTables), not in package init: every command links this
// package, and most never read a date.
type tables struct {
	// words maps normalized words and phrases (see normalize) to their
	// roles. Multi-word phrases are stored with single spaces and looked
	// up before their parts, so "il y a" is one past marker rather than
	// three fillers.
	words map[string]*word
	// maxPhraseWords is the longest phrase in words, in words.
	maxPhraseWords int
	// phraseStarts are the first words of the phrases in words: only they
	// can start a merge.
	phraseStarts map[string]bool
	// monthPrefixes are the prefixes of languages that write a month as a
	// prefix and its number ("ŋ5", "M5", "o.5" are May in Kɨfɨa, Rombo,
	// Nuasue).
	monthPrefixes map[string]bool
	// noiseWords are words that mark text as something other than a date
	// (guard.go).
	noiseWords map[string]bool
}

// wordTables returns the word tables, building them once, on the first
// call, safely from any goroutine.
var wordTables = sync.OnceValue(func() *tables {
	t := &tables{words: map[string]*word{}, maxPhraseWords: 1, phraseStarts: map[string]bool{},
		monthPrefixes: map[string]bool{}, noiseWords: map[string]bool{}}
	t.addWords()
	t.addCLDR()
	t.addNoiseWords()
	markLoaded("words")
	return t
})

func (t *tables) add(k kind, val int, list ...string) {
	for _, s := range list {
		key := normalizeKey(s)
		if n := strings.Count(key, " ") + 1; n > 1 {
			t.maxPhraseWords = max(t.maxPhraseWords, n)
			t.phraseStarts[key[:strings.IndexByte(key, ' ')]] = true
		}
		w := t.words[key]
		switch {
		case w == nil:
			t.words[key] = &word{kind: k, val: val}
		case w.kind == k && w.val == val, w.kind2 == k && w.val2 == val:
			// The same role listed twice, for instance an abbreviation
			// shared by two languages.
		case w.kind2 == kNone:
			w.kind2, w.val2 = k, val
		default:
			panic("dates: word " + key + " has more than two roles")
		}
	}
}

// months lists month names per month, all languages together. Genitive and
// abbreviated forms are included because sites print "15 мая" and "15 Mai".
var months = [12][]string{
	{"january", "jan", "januar", "jänner", "janvier", "janv", "enero", "ene", "gennaio", "gen", "janeiro", "januari",
		"январь", "января", "янв", "styczeń", "stycznia", "sty", "ocak", "oca",
		"يناير", "كانون الثاني", "ژانویه", "जनवरी"},
	{"february", "feb", "februar", "feber", "février", "févr", "fév", "febrero", "febbraio", "fevereiro", "fev", "februari",
		"февраль", "февраля", "фев", "февр", "luty", "lutego", "lut", "şubat", "şub",
		"فبراير", "شباط", "فوریه", "फ़रवरी", "फरवरी"},
	{"march", "mar", "märz", "maerz", "mrz", "mars", "marzo", "março", "maart", "mrt",
		"март", "марта", "мар", "marzec", "marca", "mart",
		"مارس", "آذار", "मार्च"},
	{"april", "apr", "avril", "avr", "abril", "abr", "aprile",
		"апрель", "апреля", "апр", "kwiecień", "kwietnia", "kwi", "nisan", "nis",
		"أبريل", "ابريل", "إبريل", "نيسان", "آوریل", "अप्रैल"},
	{"may", "mai", "mayo", "maggio", "mag", "maio", "mei",
		"май", "мая", "maj", "maja", "mayıs",
		"مايو", "أيار", "مه", "मई"},
	{"june", "jun", "juni", "juin", "junio", "giugno", "giu", "junho",
		"июнь", "июня", "июн", "czerwiec", "czerwca", "cze", "haziran", "haz",
		"يونيو", "يونيه", "حزيران", "ژوئن", "जून"},
	{"july", "jul", "juli", "juillet", "juil", "julio", "luglio", "lug", "julho",
		"июль", "июля", "июл", "lipiec", "lipca", "lip", "temmuz", "tem",
		"يوليو", "يوليه", "تموز", "ژوئیه", "जुलाई"},
	{"august", "aug", "août", "agosto", "ago", "augustus",
		"август", "августа", "авг", "sierpień", "sierpnia", "sie", "ağustos", "ağu",
		"أغسطس", "اغسطس", "آب", "اوت", "अगस्त"},
	{"september", "sep", "sept", "septembre", "septiembre", "setiembre", "set", "settembre", "setembro",
		"сентябрь", "сентября", "сен", "сент", "wrzesień", "września", "wrz", "eylül", "eyl",
		"سبتمبر", "أيلول", "سپتامبر", "सितंबर", "सितम्बर"},
	{"october", "oct", "oktober", "okt", "octobre", "octubre", "ottobre", "ott", "outubro", "out",
		"октябрь", "октября", "окт", "październik", "października", "paź", "ekim", "eki",
		"أكتوبر", "اكتوبر", "تشرين الأول", "اکتبر", "अक्टूबर", "अक्तूबर"},
	{"november", "nov", "novembre", "noviembre", "novembro",
		"ноябрь", "ноября", "ноя", "listopad", "listopada", "lis", "kasım", "kas",
		"نوفمبر", "تشرين الثاني", "نوامبر", "नवंबर", "नवम्बर"},
	{"december", "dec", "dezember", "dez", "décembre", "déc", "diciembre", "dic", "dicembre", "dezembro",
		"декабрь", "декабря", "дек", "grudzień", "grudnia", "gru", "aralık", "ara",
		"ديسمبر", "كانون الأول", "دسامبر", "दिसंबर", "दिसम्बर"},
}

// jalaliMonths are the months of the Persian solar calendar, which Iranian
// sites use for dates such as "۲۶ اردیبهشت ۱۴۰۳".
var jalaliMonths = [12]string{"فروردین", "اردیبهشت", "خرداد", "تیر", "مرداد", "شهریور", "مهر", "آبان", "آذر", "دی", "بهمن", "اسفند"}

// weekdays lists weekday names from Sunday. They are recognised only to be
// skipped: the day of the month decides the date.
var weekdays = [7][]string{
	{"sunday", "sun", "sonntag", "so", "dimanche", "dim", "domingo", "dom", "domenica", "zondag", "zo",
		"воскресенье", "вс", "niedziela", "niedz", "pazar",
		"الأحد", "یکشنبه", "रविवार", "日曜日", "日曜", "星期日", "星期天", "周日", "週日", "礼拜天", "일요일"},
	{"monday", "mon", "montag", "mo", "lundi", "lun", "lunes", "lunedì", "segunda", "segunda-feira", "maandag", "ma",
		"понедельник", "пн", "poniedziałek", "pon", "pazartesi",
		"الاثنين", "الإثنين", "دوشنبه", "सोमवार", "月曜日", "月曜", "星期一", "周一", "週一", "礼拜一", "월요일"},
	{"tuesday", "tue", "tues", "dienstag", "di", "mardi", "martes", "martedì", "terça", "terça-feira", "dinsdag",
		"вторник", "вт", "wtorek", "wt", "salı",
		"الثلاثاء", "سه‌شنبه", "मंगलवार", "火曜日", "火曜", "火", "星期二", "周二", "週二", "礼拜二", "화요일", "화"},
	{"wednesday", "wed", "mittwoch", "mi", "mercredi", "miércoles", "mié", "mercoledì", "quarta", "quarta-feira", "woensdag", "wo",
		"среда", "ср", "środa", "śr", "çarşamba",
		"الأربعاء", "چهارشنبه", "बुधवार", "水曜日", "水曜", "水", "星期三", "周三", "週三", "礼拜三", "수요일", "수"},
	{"thursday", "thu", "thur", "thurs", "donnerstag", "jeudi", "jeu", "jueves", "jue", "giovedì", "quinta", "quinta-feira", "donderdag",
		"четверг", "чт", "czwartek", "czw", "perşembe",
		"الخميس", "پنجشنبه", "गुरुवार", "बृहस्पतिवार", "木曜日", "木曜", "木", "星期四", "周四", "週四", "礼拜四", "목요일", "목"},
	{"friday", "fri", "freitag", "fr", "vendredi", "ven", "viernes", "vie", "venerdì", "sexta", "sexta-feira", "vrijdag", "vr",
		"пятница", "пт", "piątek", "pt", "cuma",
		"الجمعة", "جمعه", "शुक्रवार", "金曜日", "金曜", "金", "星期五", "周五", "週五", "礼拜五", "금요일", "금"},
	{"saturday", "sat", "samstag", "sonnabend", "sa", "samedi", "sam", "sábado", "sáb", "sabato", "zaterdag", "za",
		"суббота", "сб", "sobota", "sob", "cumartesi",
		"السبت", "شنبه", "शनिवार", "土曜日", "土曜", "土", "星期六", "周六", "週六", "礼拜六", "토요일", "토"},
}

// addWords adds the hand-written tables.
func (t *tables) addWords() {
	for i, list := range months {
		t.add(kMonth, i+1, list...)
	}
	for i, m := range jalaliMonths {
		t.add(kJalali, i+1, m)
	}
	for i, list := range weekdays {
		t.add(kWeekday, i, list...)
	}

	// Words that join the parts of a date but say nothing about it.
	t.add(kFiller, 0, "the", "of", "on", "at", "in", "de", "del", "da", "le", "la", "el", "les", "los", "las", "à", "a", "um",
		"den", "der", "dem", "om", "op", "em", "às", "as", "alle", "ore", "il", "lo", "t",
		"г", "год", "года", "гг", "в", "во", "roku", "r", "o", "godz", "saat", "yılı",
		"هـ", "ساعت", "को", "en", "y", "e", "and",
		"posted", "published", "updated", // the label itself is noise; the date after it decides
		"deadline", "due", "expires", "expiry", "closes", "closing", "ends", "date", "by", "valid",
		"klo", "kl", // "klo 10.30", "kl. 10:30": Finnish and Nordic "at" before a time
		"u", // "24.03.2019. u 22:22": Croatian, Bosnian and Serbian "at"
		// Hedges before an amount: "about an hour ago".
		"about", "around", "approximately", "approx", "almost", "nearly", "roughly", "just", "some", "only", "circa", "ca",
		"etwa", "ungefähr", "environ", "presque", "casi", "aproximadamente", "circa", "quasi", "cerca de", "quase", "bijna", "ongeveer",
		"около", "почти", "około", "prawie", "yaklaşık",
	)

	t.add(kOrdinal, 0, "st", "nd", "rd", "th", "er", "ère", "re", "e", "ème", "eme", "o", "º", "ª", "го")

	t.add(kAMPM, 0, "午前", "上午", "早上", "凌晨", "오전", "صباحا", "صباحاً", "ق.ظ.")
	t.add(kAMPM, 1, "pm", "午後", "下午", "晚上", "中午", "오후", "مساء", "مساءً", "ب.ظ.")
	t.add(kAMPMCtx, 0, "am", "ص")
	t.add(kAMPMCtx, 1, "م")

	// "now" words.
	t.add(kNow, 0, "now", "just now", "right now", "jetzt", "gerade eben", "maintenant", "à l'instant", "ahora", "adesso", "agora",
		"nu", "сейчас", "только что", "teraz", "şimdi", "الآن", "الان", "اکنون", "अभी", "今", "现在", "現在", "刚刚", "剛剛", "たった今", "지금", "방금",
		"nyní", "teď", "právě teď", "nyt", "juuri nyt", "sada", "acum", "ahora mismo", "ngayon", "sekarang", "bây giờ", "ตอนนี้", "עכשיו", "τώρα", "зараз")

	t.add(kRelDay, 0, "today", "heute", "aujourd'hui", "hoy", "oggi", "hoje", "vandaag", "сегодня", "dzisiaj", "dziś", "bugün",
		"اليوم", "امروز", "आज", "今日", "きょう", "本日", "今天", "오늘",
		"dnes", "днес", "сьогодні", "сёння", "hôm nay", "วันนี้", "আজ", "היום", "σήμερα", "idag", "i dag", "tänään", "täna",
		"azi", "astăzi", "hari ini", "danas", "danes", "šiandien", "šodien", "avui", "금일")
	t.add(kRelDay, -1, "yesterday", "gestern", "hier", "ayer", "ieri", "ontem", "gisteren", "вчера", "wczoraj", "dün",
		"أمس", "امس", "البارحة", "دیروز", "昨日", "きのう", "昨天", "어제",
		"včera", "вчора", "учора", "hôm qua", "เมื่อวาน", "เมื่อวานนี้", "গতকাল", "אתמול", "χθες", "χτες", "igår", "i går",
		"eilen", "eile", "kemarin", "jučer", "juče", "včeraj", "vakar", "ahir", "tegnap", "kahapon")
	t.add(kRelDay, 1, "tomorrow", "morgen", "demain", "mañana", "domani", "amanhã", "завтра", "jutro", "yarın",
		"غدا", "غداً", "فردا", "明日", "あした", "あす", "明天", "내일",
		"zítra", "zajtra", "утре", "ngày mai", "พรุ่งนี้", "আগামীকাল", "מחר", "αύριο", "imorgon", "i morgon", "huomenna",
		"homme", "mâine", "besok", "sutra", "jutri", "rytoj", "demà", "holnap", "bukas")
	t.add(kRelDay, -2, "day before yesterday", "the day before yesterday", "vorgestern", "avant-hier", "avant hier", "anteayer", "antes de ayer",
		"l'altro ieri", "altro ieri", "altroieri", "anteontem", "eergisteren", "позавчера", "przedwczoraj", "evvelsi gün", "önceki gün",
		"一昨日", "おととい", "前天", "그저께", "그제", "předevčírem", "predvčerom", "позавчора", "toissapäivänä", "i förrgår", "tegnapelőtt")
	t.add(kRelDay, 2, "day after tomorrow", "the day after tomorrow", "übermorgen", "après-demain", "après demain", "pasado mañana",
		"dopodomani", "depois de amanhã", "overmorgen", "послезавтра", "pojutrze", "öbür gün",
		"明後日", "あさって", "后天", "後天", "모레", "pozítří", "pozajtra", "післязавтра", "ylihuomenna", "i övermorgon", "holnapután")

	t.add(kUnit, uSecond, "second", "seconds", "sec", "secs", "s", "sek", "sekunde", "sekunden", "seconde", "secondes", "segundo", "segundos",
		"secondo", "secondi", "seconden", "секунда", "секунды", "секунд", "секунду", "сек", "sekunda", "sekundy", "sekund", "sekundę", "saniye",
		"ثانية", "ثواني", "ثانیه", "सेकंड", "秒", "秒钟", "秒鐘", "초")
	t.add(kUnit, uMinute, "minute", "minutes", "min", "mins", "m", "mn", "minuten", "minuto", "minutos", "minuti", "minuut",
		"минута", "минуты", "минут", "минуту", "мин", "minuta", "minuty", "minut", "minutę", "dakika", "dk",
		"دقيقة", "دقائق", "دقیقه", "मिनट", "分", "分钟", "分鐘", "분")
	t.add(kUnit, uHour, "hour", "hours", "hr", "hrs", "stunde", "stunden", "std", "heure", "heures", "hora", "horas", "ora", "ore",
		"uur", "uren", "час", "часа", "часов", "godzina", "godziny", "godzin", "godzinę", "saat", "h",
		"ساعة", "ساعات", "ساعت", "घंटे", "घंटा", "時間", "小时", "小時", "钟头", "시간")
	t.add(kUnit, uDay, "day", "days", "d", "tag", "tage", "tagen", "jour", "jours", "día", "días", "giorno", "giorni", "dia", "dias",
		"dag", "dagen", "день", "дня", "дней", "дн", "dzień", "dni", "dnia", "gün",
		"يوم", "أيام", "ايام", "روز", "दिन", "日", "天", "일")
	t.add(kUnit, uWeek, "week", "weeks", "wk", "wks", "w", "woche", "wochen", "semaine", "semaines", "semana", "semanas",
		"settimana", "settimane", "weken", "неделя", "недели", "недель", "неделю", "нед", "tydzień", "tygodnie", "tygodni", "tygodnia", "hafta",
		"أسبوع", "اسبوع", "أسابيع", "هفته", "सप्ताह", "हफ्ते", "हफ़्ते", "週間", "週", "周", "星期", "礼拜", "주")
	t.add(kUnit, uMonth, "month", "months", "mo", "mos", "mth", "mths", "mnth", "mnths", "monat", "monate", "monaten", "mois", "mes", "meses", "mese", "mesi",
		"maand", "maanden", "месяц", "месяца", "месяцев", "мес", "miesiąc", "miesiące", "miesięcy", "miesiąca", "ay",
		"شهر", "أشهر", "اشهر", "شهور", "ماه", "महीने", "महीना", "か月", "ヶ月", "カ月", "ヵ月", "ケ月", "个月", "個月", "개월", "달")
	t.add(kUnit, uYear, "year", "years", "yr", "yrs", "y", "jahr", "jahre", "jahren", "an", "ans", "année", "années", "año", "años",
		"anno", "anni", "ano", "anos", "jaar", "jaren", "год", "года", "лет", "rok", "lata", "lat", "yıl", "sene",
		"سنة", "سنوات", "سال", "साल", "वर्ष", "年", "년")

	t.add(kUnit, uDecade, "decade", "decades", "jahrzehnt", "jahrzehnte", "jahrzehnten", "décennie", "décennies", "década", "décadas",
		"decennio", "decenni", "decennium", "decennia", "десятилетие", "десятилетия", "десятилетий", "dekada", "dekady", "dekad", "on yıl")
	t.add(kUnit, uCentury, "century", "centuries", "jahrhundert", "jahrhunderte", "jahrhunderten", "siècle", "siècles", "siglo", "siglos",
		"secolo", "secoli", "eeuw", "eeuwen", "век", "века", "веков", "wiek", "wieki", "wieków", "yüzyıl")

	t.add(kAgo, 0, "ago", "back", "fa", "atrás", "atras", "geleden", "назад", "temu", "önce", "evvel",
		"قبل", "پیش", "पहले", "前", "以前", "之前", "전")
	t.add(kLater, 0, "later", "from now", "hence", "içinde", "in the future", "بعد", "später", "plus tard", "después", "dopo", "depois", "później", "sonra",
		"बाद", "後", "后", "以后", "以後", "之后", "후", "뒤")
	t.add(kPrePast, 0, "vor", "il y a", "hace", "há", "ha", "منذ", "قبل", "acum")
	t.add(kPreFuture, 0, "in", "dans", "en", "dentro de", "tra", "fra", "em", "daqui a", "over", "через", "спустя", "za", "بعد")
	t.add(kLast, 0, "last", "past", "previous", "letzten", "letzter", "letztes", "letzte", "vergangenen", "dernier", "dernière", "pasado", "pasada",
		"scorso", "scorsa", "passado", "passada", "vorige", "afgelopen", "прошлый", "прошлую", "прошлой", "прошлом", "ostatni", "ostatnia", "zeszły", "geçen")
	t.add(kThis, 0, "this", "current", "diese", "dieser", "diesen", "dieses", "ce", "cette", "este", "esta", "questo", "questa",
		"deze", "dit", "этот", "эту", "этой", "ten", "ta", "bu")
	t.add(kNext, 0, "next", "coming", "upcoming", "nächsten", "nächster", "nächstes", "nächste", "kommenden", "prochain", "prochaine", "próximo", "próxima",
		"prossimo", "prossima", "volgende", "komende", "следующий", "следующую", "следующей", "następny", "następna", "przyszły", "gelecek")

	t.add(kCount, 1, "a", "an", "one", "ein", "eine", "einer", "einem", "einen", "un", "une", "uno", "una", "um", "uma", "een",
		"один", "одна", "одну", "jeden", "jedna", "jedną", "bir", "一", "한", "元")
	t.add(kCount, 2, "two", "zwei", "deux", "dos", "due", "dois", "duas", "twee", "два", "две", "dwa", "dwie", "iki", "两", "兩", "二", "두")
	t.add(kCount, 3, "three", "drei", "trois", "tres", "tre", "três", "drie", "три", "trzy", "üç", "三", "세")
	t.add(kCount, 4, "four", "vier", "quatre", "cuatro", "quattro", "quatro", "четыре", "cztery", "dört", "四", "네")
	t.add(kCount, 5, "five", "fünf", "cinq", "cinco", "cinque", "vijf", "пять", "pięć", "beş", "五", "다섯")
	t.add(kCount, 6, "six", "sechs", "seis", "sei", "zes", "шесть", "sześć", "altı", "六")
	t.add(kCount, 7, "seven", "sieben", "sept", "siete", "sette", "sete", "zeven", "семь", "siedem", "yedi", "七")
	t.add(kCount, 8, "eight", "acht", "huit", "ocho", "otto", "oito", "восемь", "osiem", "sekiz", "八")
	t.add(kCount, 9, "nine", "neun", "neuf", "nueve", "nove", "negen", "девять", "dziewięć", "dokuz", "九")
	t.add(kCount, 10, "ten", "zehn", "dix", "diez", "dieci", "dez", "tien", "десять", "dziesięć", "on", "十")
	t.add(kCount, 11, "eleven", "elf", "onze", "once", "undici", "одиннадцать")
	t.add(kCount, 12, "twelve", "zwölf", "douze", "doce", "dodici", "doze", "twaalf", "двенадцать", "dwanaście", "on iki")
	t.add(kCount, 13, "thirteen")
	t.add(kCount, 14, "fourteen")
	t.add(kCount, 15, "fifteen", "fünfzehn", "quinze", "quince", "quindici", "vijftien", "пятнадцать", "piętnaście")
	t.add(kCount, 16, "sixteen")
	t.add(kCount, 17, "seventeen")
	t.add(kCount, 18, "eighteen")
	t.add(kCount, 19, "nineteen")
	t.add(kCount, 20, "twenty", "zwanzig", "vingt", "veinte", "venti", "vinte", "twintig", "двадцать", "dwadzieścia", "yirmi")
	t.add(kCount, 30, "thirty", "dreißig", "trente", "treinta", "trenta", "trinta", "dertig", "тридцать", "trzydzieści", "otuz")
	t.add(kCount, 40, "forty")
	t.add(kCount, 45, "forty-five")
	t.add(kCount, 50, "fifty")
	t.add(kCount, 60, "sixty")
	t.add(kCount, 90, "ninety")
	t.add(kCount, 100, "hundred", "a hundred", "one hundred")
	t.add(kCount, 2, "a couple of", "couple of", "a couple")

	// Japanese eras: the Gregorian year before the era's first year.
	t.add(kEra, 2018, "令和")
	t.add(kEra, 1988, "平成")
	t.add(kEra, 1925, "昭和")
	t.add(kEra, 1911, "大正")
	t.add(kEra, 1867, "明治")

	t.add(kMarkY, 0, "年", "년")
	t.add(kMarkM, 0, "月", "월")
	t.add(kMarkD, 0, "日", "일", "号", "號")
	t.add(kMarkH, 0, "時", "时", "点", "點", "시")
	t.add(kMarkMin, 0, "分", "분")
	t.add(kMarkS, 0, "秒", "초")
	t.add(kHalf, 0, "半")
	// Tibetan and Dzongkha name the part before its number.
	t.add(kPreY, 0, "ལོ", "སྤྱི ལོ", "པསྱི ལོ")
	t.add(kPreM, 0, "ཟླ", "ཟལ")
	t.add(kPreD, 0, "ཚེས")
	// Mongolian numeric months: "5-р сарын 15", the fifth month's 15th.
	t.add(kUnit, uMonth, "сарын")
	t.add(kMarkM, 0, "сарын")
	t.add(kOrdinal, 0, "р")
	t.add(kHourWord, 0, "uhr", "h", "hs", "hrs", "heures", "horas", "बजे", "ч", "óra")

	t.add(kRangeSep, 0, "to", "until", "till", "til", "through", "thru", "and", "bis", "au", "al", "hasta", "fino", "tot", "до", "по", "do",
		"至", "到", "から", "부터", "إلى", "الى", "تا", "से")
	t.add(kRangeStart, 0, "from", "between", "von", "vom", "du", "desde", "dal", "dalla", "van", "с", "со", "od", "entre",
		"まで", "까지", "من")

	for i, z := range zoneTable {
		t.add(kZone, i, strings.ToLower(z.name))
	}
}

// cldrLanguage is one language's words from the CLDR and the GNU C
// library's locales (words_cldr.go).
type cldrLanguage struct {
	lang     string
	months   [12][]string
	weekdays [7][]string
	// Abbreviations of two or three letters in Latin, Greek and Cyrillic
	// script: weak words (see word.weak).
	shortMonths   [12][]string
	shortWeekdays [7][]string
	ampm          [2][]string
	// Words of the relative patterns: direction words after the amount
	// ("ago", "air ais") or before it ("antaŭ", "in"), and unit names from
	// seconds to years.
	ago, later, prePast, preFuture []string
	units                          [7][]string
	duals                          [7][]string // a unit in the dual, an amount of two ("يومين")
	monthPrefixes                  []string    // "ŋ" of "ŋ5": months written as a prefix and their number
	utc                            []string    // names of UTC and GMT ("Koordinierte Weltzeit")
	fillers                        []string    // literal words of the language's date and time formats ("gada", "ค.ศ", "a viz")
}

// addCLDR adds the words of every language the library knows
// (words_cldr.go, generated from the CLDR and glibc), after the
// hand-written tables and only where they are safe: a word the tables
// already know keeps its roles (a unit or a word such as "this" may also
// become a format word, as "m." and "d." are in "2024 m. gegužės 15 d."
// and "ta'" in "15 ta' Mejju 2024"), a word two languages use
// for different things is left to the library, and Latin, Greek and
// Cyrillic words of one or two letters ("ma", "so", "st") are left out,
// since they are words of other languages too; format and direction words
// of two letters ("ga", "po") and single letters of other scripts ("թ.")
// are kept.
func (t *tables) addCLDR() {
	type role struct {
		k kind
		v int
	}
	// For each candidate word and role: whether a strong (not weak) name
	// has it.
	cands := map[string]map[role]bool{}
	duals := map[string]bool{}
	note := func(s string, k kind, v int, weak bool) {
		key := normalizeKey(s)
		if key == "" {
			return
		}
		if w := t.words[key]; w != nil {
			if k == kFiller && w.kind2 == kNone && (w.kind == kUnit || w.kind == kThis || w.kind == kLast || w.kind == kNext) {
				t.add(kFiller, 0, key)
			}
			return
		}
		r, _ := utf8.DecodeRuneInString(key)
		n := utf8.RuneCountInString(key)
		switch {
		case k == kFiller && r >= 0x250 && !isLatinLike(r), k == kFiller && r >= 0x530:
			// A letter of another script: "թ." (Armenian "year").
		case k == kFiller || k == kPrePast || k == kPreFuture || k == kAgo || k == kLater:
			if isLatinLike(r) && n < 2 {
				return
			}
		case weak && k == kMonth:
			// Short month abbreviations are read only in a complete date,
			// and not of two letters: "No 5 2024" is a number.
			if isLatinLike(r) && n < 3 {
				return
			}
		case weak, k == kAMPM:
			// A weekday abbreviation only in a complete date, a meridiem
			// marker only with a time ("md", "nh", "ఉ").
			if isLatinLike(r) && n < 2 {
				return
			}
		default:
			if isLatinLike(r) && n < 3 {
				return
			}
		}
		if cands[key] == nil {
			cands[key] = map[role]bool{}
		}
		cands[key][role{k, v}] = cands[key][role{k, v}] || !weak
	}
	for i := range cldrNames {
		l := &cldrNames[i]
		for m, names := range l.months {
			for _, n := range names {
				note(n, kMonth, m+1, false)
			}
		}
		for m, names := range l.shortMonths {
			for _, n := range names {
				note(n, kMonth, m+1, true)
			}
		}
		for d, names := range l.weekdays {
			for _, n := range names {
				note(n, kWeekday, d, false)
			}
		}
		for d, names := range l.shortWeekdays {
			for _, n := range names {
				note(n, kWeekday, d, true)
			}
		}
		for v, names := range l.ampm {
			for _, n := range names {
				note(n, kAMPM, v, false)
			}
		}
		for _, n := range l.ago {
			note(n, kAgo, 0, false)
		}
		for _, n := range l.later {
			note(n, kLater, 0, false)
		}
		for _, n := range l.prePast {
			note(n, kPrePast, 0, false)
		}
		for _, n := range l.preFuture {
			note(n, kPreFuture, 0, false)
		}
		for u, names := range l.units {
			for _, n := range names {
				note(n, kUnit, uSecond+u, false)
			}
		}
		for u, names := range l.duals {
			for _, n := range names {
				note(n, kUnit, uSecond+u, false)
				duals[normalizeKey(n)] = true
			}
		}
		for _, f := range l.fillers {
			note(f, kFiller, 0, false)
		}
		for _, n := range l.utc {
			note(n, kZone, 0, false) // zoneTable[0] is UTC
		}
		for _, m := range l.monthPrefixes {
			t.monthPrefixes[normalizeKey(m)] = true
		}
	}
	for key, roles := range cands {
		// A format word of one language may be another's name of
		// something: the name wins, and the word is a filler too.
		// A strong name beats weak ones: "md" is a meridiem marker in
		// Albanian and an abbreviated weekday elsewhere.
		strongs := 0
		for _, strong := range roles {
			if strong {
				strongs++
			}
		}
		if strongs > 0 && strongs < len(roles) {
			for r, strong := range roles {
				if !strong {
					delete(roles, r)
				}
			}
		}
		_, filler := roles[role{kFiller, 0}]
		if filler && len(roles) == 2 {
			delete(roles, role{kFiller, 0})
		} else if len(roles) != 1 {
			continue
		} else {
			filler = false
		}
		for r, strong := range roles {
			t.add(r.k, r.v, key)
			if r.k == kUnit || !strong {
				t.words[key].weak = true
			}
		}
		if filler {
			t.add(kFiller, 0, key)
		}
		if w := t.words[key]; duals[key] && w.kind == kUnit && w.kind2 == kNone {
			t.add(kCount, 2, key)
		}
	}
}

// tableLanguages are the languages whose dates the tables describe whole
// (months, weekdays, relative words and their grammar). When every word of
// a text is in the tables and the library reads it in one of these
// languages, the hand-written parser's refusal stands: the library would
// only read it more loosely ("2024年13月1日" as 13 January, "ago" alone as
// August). Words of other languages that happen to be in the tables
// ("eest" is a zone and Estonian for "before") leave the library free.
var tableLanguages = map[string]bool{
	"en": true, "de": true, "fr": true, "es": true, "it": true, "pt": true, "nl": true, "ru": true, "pl": true,
	"tr": true, "ar": true, "fa": true, "hi": true, "ja": true, "zh": true, "ko": true,
}

// looksRelative reports whether w can only make sense in a relative date.
func (w *word) looksRelative() bool {
	switch w.kind {
	case kRelDay, kNow, kUnit, kAgo, kLater, kPrePast, kPreFuture, kLast, kNext, kThis:
		return true
	}
	return w.kind2 == kAgo || w.kind2 == kUnit || w.kind2 == kPreFuture
}
