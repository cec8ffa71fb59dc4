#!/usr/bin/python3
"""Generate dates/words_cldr.go: month and weekday names, meridiem markers,
the literal words of date and time formats and the words of relative dates
("antaŭ {0} tagoj"), for every language go-dateparser has locale data for,
from the Unicode CLDR as Babel ships it and from the GNU C library's locale
sources (/usr/share/i18n/locales), whose spellings and abbreviations often
differ from the CLDR's ("نوف", "Մայ", "a viz").

Run from the repository root, with the module downloaded:

  apt-get install locales python3-babel
  /usr/bin/python3 dates/testdata/genwords.py && gofmt -w dates/words_cldr.go

The hand-written tables in words.go come first: dates/words.go adds these
names only where they are unambiguous (see addCLDR there).
"""

import glob
import os
import re
import subprocess
import sys

from babel import Locale, localedata

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gencorpus import LOCALES, lc_time  # noqa: E402  (the same reading of the glibc sources)

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "words_cldr.go")


# Languages whose sites count years in another era (Thai and Lao sites
# write the Buddhist year, 2567 for 2024): the library reads those, with
# the conversion.
SKIP = {"th", "lo"}


def library_languages():
    d = subprocess.run(["go", "list", "-m", "-f", "{{.Dir}}", "github.com/markusmobius/go-dateparser"],
                       capture_output=True, text=True, check=True, env=dict(os.environ, GOWORK="off")).stdout.strip()
    names = [os.path.basename(p)[:-3] for p in glob.glob(os.path.join(d, "internal", "data", "*.go"))]
    return sorted({n.split("-")[0] for n in names if not n[0].isdigit()})


def clean(name):
    # A trailing apostrophe or geresh marks an abbreviation ("ד'", "נוב׳")
    # and is not part of the word the lexer cuts.
    name = name.strip().strip(".").strip().rstrip("'\u05f3\u2019").strip()
    if not name or re.search(r"[\d.,:;/()]", name):
        return None  # "tháng 5" and "ม.ค" are not words the lexer cuts whole: the library's
    return name


def latin_like(s):
    """Latin, Greek, Cyrillic and the other alphabets written with spaces."""
    c = ord(s[0])
    return c < 0x0590 or 0x10A0 <= c < 0x1100 or 0x1E00 <= c < 0x2000


def literals(pattern):
    """The literal words of a CLDR date pattern: quoted text, and letters
    outside the ASCII pattern letters."""
    out = re.findall(r"'([^']+)'", pattern)
    rest = re.sub(r"'[^']*'", " ", pattern)
    out += re.findall(r"[^\x00-\x7f\s,.\-/()،]+", rest)
    words = []
    for lit in out:
        for w in re.split(r"[\s,\u0f0b]+", lit):  # the tsheg ends a Tibetan syllable
            w = w.strip(".()")
            if w and not re.search(r"\d", w):
                words.append(w)
    return words


def go_list(xs):
    return "{" + ", ".join('"%s"' % x.replace("\\", "\\\\").replace('"', '\\"') for x in xs) + "}"


UNITS = ["second", "minute", "hour", "day", "week", "month", "year"]


def words_of(s):
    """Cleaned words of a phrase, or None when it is not one the lexer can
    match whole (digits, dots or brackets inside). Optional letters in
    brackets ("viru(n)") are kept: normalization drops the brackets."""
    s = re.sub(r"(?<=\w)\(([a-z]{1,3})\)", r"\1", s.strip().strip(".").strip())
    if not s or re.search(r"[\d.,:;/()\[\]{}]", s):
        return None
    return s


def common_prefix(lists):
    out = []
    for ws in zip(*lists):
        if len(set(ws)) != 1:
            break
        out.append(ws[0])
    return out


def relative_words(lid):
    """The direction words and unit names of a CLDR locale's relative
    patterns ("{0} days ago", "in {0} days", "prieš {0} dienas"). The words
    every unit's pattern shares are the direction, the rest is the unit."""
    try:
        df = Locale.parse(lid)._data["date_fields"]
    except Exception:
        return None
    res = {"ago": set(), "later": set(), "prePast": set(), "preFuture": set(), "units": [set() for _ in UNITS],
           "duals": [set() for _ in UNITS]}
    for dirn in ("past", "future"):
        entries = []
        bare = []  # patterns without a number: "قبل يومين" (two days), "לפני שבוע" (a week)
        for ui, u in enumerate(UNITS):
            for width in ("", "-short", "-narrow"):
                try:
                    pats = df[u + width][dirn]
                except KeyError:
                    continue
                for form, pat in pats.items():
                    if "{0}" not in pat and form in ("one", "two"):
                        bare.append((ui, form, pat.split()))
                    if pat.count("{0}") != 1:
                        continue
                    pre, post = pat.split("{0}")
                    if pre and not pre[-1].isspace() or post and not post[0].isspace():
                        continue  # "angu-{0}": the number glued to a word
                    entries.append((ui, pre.split(), post.split()))
        # Direction words are what many units' patterns share: the whole
        # text before the number ("in", "an ceann"), or the words after
        # the unit that end the patterns ("ago", "air ais"). Patterns are
        # grouped first, since a locale may mix two ways ("{0} din pehle"
        # and "{0} days ago" in hi_Latn).
        groups = {}
        for ui, pre, post in entries:
            if pre:
                groups.setdefault((True, " ".join(pre)), []).append((ui, pre, post))
            elif post:
                groups.setdefault((False, post[-1]), []).append((ui, pre, post))
        for (before, _), group in sorted(groups.items()):
            if len({e[0] for e in group}) < 3:
                continue
            if before:
                d = group[0][1]
                units = [(e[0], e[2]) for e in group]
            else:
                d = common_prefix([e[2][::-1] for e in group])[::-1]
                units = [(e[0], e[2][:len(e[2]) - len(d)]) for e in group]
            dw = words_of(" ".join(d))
            if not dw:
                continue
            key = {("past", True): "prePast", ("past", False): "ago", ("future", True): "preFuture", ("future", False): "later"}[(dirn, before)]
            res[key].add(dw)
            for ui, u in units:
                uw = words_of(" ".join(u)) if u else None
                if uw:
                    res["units"][ui].add(uw)
        # The unit of a pattern without a number is what its direction
        # leaves; in the dual form it counts two.
        pre = res["prePast" if dirn == "past" else "preFuture"]
        post = res["ago" if dirn == "past" else "later"]
        for ui, form, ws in bare:
            rest = None
            for d in pre:
                dw = d.split()
                if ws[:len(dw)] == dw and len(ws) > len(dw):
                    rest = ws[len(dw):]
            for d in post:
                dw = d.split()
                if ws[-len(dw):] == dw and len(ws) > len(dw):
                    rest = ws[:-len(dw)]
            uw = words_of(" ".join(rest)) if rest else None
            if uw:
                res["duals" if form == "two" else "units"][ui].add(uw)
    return res


def glibc_words():
    """Month and weekday names, meridiem markers and the literal words of
    the formats of every glibc locale, per language."""
    out = {}
    for path in sorted(glob.glob(os.path.join(LOCALES, "*_*"))):
        name = os.path.basename(path)
        if "@" in name or "translit" in name or name.startswith("iso"):
            continue
        lc = lc_time(name)
        if not lc or len(lc.get("mon", [])) != 12 or len(lc.get("day", [])) != 7:
            continue
        w = out.setdefault(name.split("_")[0], {"mon": [[] for _ in range(12)], "abmon": [[] for _ in range(12)],
                                                 "day": [[] for _ in range(7)], "abday": [[] for _ in range(7)],
                                                 "ampm": [[], []], "fill": []})
        for key in ("mon", "abmon", "alt_mon"):
            for m, n in enumerate(lc.get(key, [])[:12]):
                w["mon" if key == "alt_mon" else key][m].append(n)
        for key in ("day", "abday"):
            for d, n in enumerate(lc.get(key, [])[:7]):
                w[key][d].append(n)
        for i, n in enumerate((lc.get("am_pm") or [])[:2]):
            w["ampm"][i].append(n)
        for key in ("d_t_fmt", "d_fmt", "date_fmt"):
            f = (lc.get(key) or [""])[0]
            w.setdefault("suffixes", set()).update(re.findall(r"%[-_0^#]?[bBh]([^\W\d_]+)", f))
        for key in ("d_t_fmt", "d_fmt", "date_fmt", "t_fmt", "t_fmt_ampm"):
            f = (lc.get(key) or [""])[0]
            f = re.sub(r"%[-_0^#]?[EO]?[a-zA-Z%+]", " ", f)
            for lit in re.split(r"[\s,.:;/()\-\u0f0b]+", f):
                if lit and not re.search(r"\d", lit):
                    w["fill"].append(lit)
    return out


def undot(s):
    """Dotted initials ("m.d", "N.U.", "د.ن", "म.नं.") in the one form the
    lexer looks up: each initial followed by a dot ("m.d."). Latin initials
    are single letters, others up to three characters."""
    parts = s.strip().rstrip(".").split(".") if s else []
    if len(parts) < 2 or len(parts) > 4:
        return None
    for p in parts:
        if not p or re.search(r"[\s\d]", p) or len(p) > (1 if p.isascii() else 3):
            return None
    return ".".join(parts) + "."


def short_is_word(s):
    """Latin, Greek and Cyrillic: scripts whose short abbreviations ("pro",
    "led", "мар") are words of other languages too. Armenian and Georgian
    abbreviations ("նոյ", "Մայ") are not."""
    c = ord(s[0])
    return c < 0x0530 or 0x1E00 <= c < 0x2000


def add_ampm(lst, names):
    for n in names:
        d = undot(n)
        if d:
            if d not in lst:
                lst.append(d)  # dotted initials, kept with their dots
        else:
            add_names(lst, [n], 2)


def add_names(lst, names, minlen=0, short=None):
    """Adds the cleaned names to lst, but not those of a Latin, Greek or
    Cyrillic script shorter than minlen letters: those of two letters or
    more go to short, when given (abbreviations such as "Sad" and "Sr",
    read only inside a complete date)."""
    for n in names:
        n = clean(n) if n else None
        if n and short_is_word(n) and len(n) < minlen:
            if short is not None and len(n) >= 2 and n not in short:
                short.append(n)
            n = None
        if n and n not in lst:
            lst.append(n)


def main():
    glibc = glibc_words()
    ids = localedata.locale_identifiers()
    langs = []
    for lang in library_languages():
        if lang in SKIP:
            continue
        # The language and its other scripts ("hi_Latn", "uz_Arab", "sr_Latn").
        locs = []
        for lid in sorted(i for i in ids if i == lang or re.fullmatch(re.escape(lang) + r"_[A-Z][a-z]{3}", i)):
            try:
                locs.append((lid, Locale.parse(lid)))
            except Exception:
                pass
        g = glibc.get(lang)
        if not locs and not g:
            continue  # neither source knows it ("tl" has glibc's names only)
        months = [[] for _ in range(12)]
        days = [[] for _ in range(7)]
        utc = []  # names of UTC: "Koordinierte Weltzeit"
        prefixes = set()  # "ŋ" of "ŋ5": months written as a prefix and their number
        suffixes = set(g.get("suffixes", ())) if g else set()  # "ren" of "maiatzaren": glued to the month
        short_months = [[] for _ in range(12)]
        short_days = [[] for _ in range(7)]
        ampm = [[], []]
        fill = []
        rel = {"ago": set(), "later": set(), "prePast": set(), "preFuture": set(), "units": [set() for _ in UNITS],
               "duals": [set() for _ in UNITS]}
        for lid, loc in locs:
            for m in range(1, 13):
                for ctx in ("format", "stand-alone"):
                    for width in ("wide", "abbreviated"):
                        try:
                            n = loc.months[ctx][width][m]
                        except KeyError:
                            continue
                        pm = re.fullmatch(r"([^\W\d]+)\.?%d" % m, n.strip())
                        if pm and m >= 10:  # two digits: a number, not part of a name
                            prefixes.add(pm.group(1))
                        # "pro", "led": short abbreviations that are words elsewhere
                        add_names(months[m - 1], [n], 4 if width == "abbreviated" else 0, short_months[m - 1])
            for k, d in enumerate((6, 0, 1, 2, 3, 4, 5)):  # Babel counts from Monday; the tables from Sunday
                for width in ("wide", "abbreviated"):
                    try:
                        n = loc.days["format"][width][d]
                    except KeyError:
                        continue
                    add_names(days[k], [n], 4 if width == "abbreviated" else 0, short_days[k])
            for ctx in ("format", "stand-alone"):
                for width in ("abbreviated", "wide"):
                    for i, p in enumerate(("am", "pm")):
                        try:
                            add_ampm(ampm[i], [loc.day_periods[ctx][width][p]])
                        except KeyError:
                            pass
            for f in ("full", "long", "medium", "short"):
                try:
                    suffixes.update(re.findall(r"[ML]{3,4}'([^'\s]+)'", loc.date_formats[f].pattern))
                except (KeyError, AttributeError):
                    pass
                for table in (loc.date_formats, loc.time_formats):
                    try:
                        fill += literals(table[f].pattern)
                    except (KeyError, AttributeError):
                        pass
                try:
                    fill += literals(str(loc.datetime_formats[f]).replace("{0}", " ").replace("{1}", " "))
                except (KeyError, AttributeError):
                    pass
            for width in ("abbreviated", "wide"):
                try:
                    fill.append(loc.eras[width][1])  # the current era: AD, n. Chr., ค.ศ.
                except KeyError:
                    pass
            # The names of Coordinated Universal Time and Greenwich Mean
            # Time, which full formats write after the time.
            for table, key in ((loc._data["time_zones"], "Etc/UTC"), (loc._data["meta_zones"], "GMT")):
                for width in ("long", "short"):
                    try:
                        n = words_of(table[key][width]["standard"])
                    except (KeyError, TypeError):
                        continue
                    if n and n not in utc:
                        utc.append(n)
            r = relative_words(lid)
            if r:
                for k in ("ago", "later", "prePast", "preFuture"):
                    rel[k] |= r[k]
                for u in range(len(UNITS)):
                    rel["units"][u] |= r["units"][u]
                    rel["duals"][u] |= r["duals"][u]
        if g:
            # Short Latin abbreviations ("Pro", "Nob") are left out, as the
            # CLDR's are: they are words elsewhere ("iPhone 15 Pro").
            for m in range(12):
                add_names(months[m], g["mon"][m])
                add_names(months[m], g["abmon"][m], 4, short_months[m])
            for d in range(7):
                add_names(days[d], g["day"][d])
                add_names(days[d], g["abday"][d], 4, short_days[d])
            for i in range(2):
                add_ampm(ampm[i], g["ampm"][i])
            fill += g["fill"]
        # A case ending glued to the month in the formats ("MMMM'ren'",
        # "%bren" in Basque): the names take it too.
        for m in range(12):
            months[m] += [n + x for x in sorted(suffixes) for n in months[m] + short_months[m] if " " not in n]
        if lang in ("bo", "dz"):
            # Tibetan writes a month before the day in the genitive:
            # "ཟླ་བ་ལྔ་པའི་ཚེས་15".
            for m in range(12):
                months[m] += [n + "འི" for n in months[m] if n.endswith(("པ", "ཕ", "པོ"))]
        if lang == "ckb":
            # Sorani joins a month to its day with the ezafe: "15ی ئایاری 2024".
            for m in range(12):
                months[m] += [n + "ی" for n in months[m] if not n.endswith("ی")]
        if lang == "mn":
            # Mongolian too: "тавдугаар сарын 15", the month of "тавдугаар сар".
            for m in range(12):
                months[m] += [n + "ын" for n in months[m] if n.lower().endswith("сар")]
        # A word most month names start with is an article or a
        # preposition ("dhen Fhaoilleach", "dhen t-Samhain"): a format
        # word, and the rest of the name is a name too.
        firsts = {}
        for m in range(12):
            for w in {n.split()[0] for n in months[m] if " " in n}:
                firsts[w] = firsts.get(w, 0) + 1
        for w, c in firsts.items():
            if c >= 6:
                fill.append(w)
                for m in range(12):
                    add_names(months[m], [n.split(None, 1)[1] for n in months[m] if n.split()[0] == w])
        fill = sorted({w.strip(".") for w in fill if w.strip(".") and "." not in w.strip(".")})
        for i in range(2):
            ampm[i] = [a for a in ampm[i] if a.lower() not in ("am", "pm")]
        rel = {k: (sorted(v) if isinstance(v, set) else [sorted(x) for x in v]) for k, v in rel.items()}
        short_months = [[n for n in ns if n not in months[m]] for m, ns in enumerate(short_months)]
        short_days = [[n for n in ns if n not in days[d]] for d, ns in enumerate(short_days)]
        langs.append((lang, months, days, fill, ampm, rel, short_months, short_days, sorted(prefixes), sorted(utc)))
    with open(OUT, "w", encoding="utf-8") as f:
        f.write("// Code generated by dates/testdata/genwords.py from the Unicode CLDR (Babel) and the GNU C library's locales; DO NOT EDIT.\n\n")
        f.write("package dates\n\n")
        f.write("// cldrNames are month and weekday names (weekdays from Sunday), meridiem\n")
        f.write("// markers, the literal words of date and time formats and the words of\n")
        f.write("// relative dates, per language.\n")
        f.write("var cldrNames = []cldrLanguage{\n")
        for lang, months, days, fill, ampm, rel, short_months, short_days, prefixes, utc in langs:
            f.write("\t{lang: %s,\n" % ('"%s"' % lang))
            f.write("\t\tmonths: [12][]string{%s},\n" % ", ".join(go_list(m) for m in months))
            f.write("\t\tweekdays: [7][]string{%s},\n" % ", ".join(go_list(d) for d in days))
            f.write("\t\tshortMonths: [12][]string{%s},\n" % ", ".join(go_list(m) for m in short_months))
            f.write("\t\tshortWeekdays: [7][]string{%s},\n" % ", ".join(go_list(d) for d in short_days))
            f.write("\t\tampm: [2][]string{%s},\n" % ", ".join(go_list(a) for a in ampm))
            f.write("\t\tago: []string%s, later: []string%s,\n" % (go_list(rel["ago"]), go_list(rel["later"])))
            f.write("\t\tprePast: []string%s, preFuture: []string%s,\n" % (go_list(rel["prePast"]), go_list(rel["preFuture"])))
            f.write("\t\tunits: [7][]string{%s},\n" % ", ".join(go_list(u) for u in rel["units"]))
            f.write("\t\tduals: [7][]string{%s},\n" % ", ".join(go_list(u) for u in rel["duals"]))
            f.write("\t\tmonthPrefixes: []string%s,\n" % go_list(prefixes))
            f.write("\t\tutc: []string%s,\n" % go_list(utc))
            f.write("\t\tfillers: []string%s},\n" % go_list(fill))
        f.write("}\n")


if __name__ == "__main__":
    main()
