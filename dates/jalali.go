package dates

import "time"

// The Persian solar (Jalali) calendar, used by Iranian sites. The
// conversions are the widely used arithmetic ones, exact for the years
// sites print (they follow the 33-year cycle, which matches the
// astronomical calendar from 1178 to 1634 AP).

// jalaliToGregorian converts a Jalali date; ok is false for a day that
// does not exist.
func jalaliToGregorian(jy, jm, jd int) (gy, gm, gd int, ok bool) {
	if jy < 1 || jm < 1 || jm > 12 || jd < 1 || jd > 31 || jm > 6 && jd > 30 {
		return 0, 0, 0, false
	}
	jy += 1595
	days := -355668 + 365*jy + (jy/33)*8 + ((jy%33)+3)/4 + jd
	if jm < 7 {
		days += (jm - 1) * 31
	} else {
		days += (jm-7)*30 + 186
	}
	gy = 400 * (days / 146097)
	days %= 146097
	if days > 36524 {
		days--
		gy += 100 * (days / 36524)
		days %= 36524
		if days >= 365 {
			days++
		}
	}
	gy += 4 * (days / 1461)
	days %= 1461
	if days > 365 {
		gy += (days - 1) / 365
		days = (days - 1) % 365
	}
	gd = days + 1
	for gm = 1; gm <= 12 && gd > daysIn(gy, gm); gm++ {
		gd -= daysIn(gy, gm)
	}
	// 30 Esfand exists only in leap years: check by converting back.
	if y, m, d := gregorianToJalali(gy, gm, gd); y != jy-1595 || m != jm || d != jd {
		return 0, 0, 0, false
	}
	return gy, gm, gd, true
}

// gregorianToJalali converts a Gregorian date.
func gregorianToJalali(gy, gm, gd int) (jy, jm, jd int) {
	cum := [12]int{0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334}
	gy2 := gy
	if gm > 2 {
		gy2 = gy + 1
	}
	days := 355666 + 365*gy + (gy2+3)/4 - (gy2+99)/100 + (gy2+399)/400 + gd + cum[gm-1]
	jy = -1595 + 33*(days/12053)
	days %= 12053
	jy += 4 * (days / 1461)
	days %= 1461
	if days > 365 {
		jy += (days - 1) / 365
		days = (days - 1) % 365
	}
	if days < 186 {
		return jy, 1 + days/31, 1 + days%31
	}
	return jy, 7 + (days-186)/30, 1 + (days-186)%30
}

// jalaliYear returns the Jalali year that t falls in.
func jalaliYear(t time.Time) int {
	y, m, d := t.Date()
	jy, _, _ := gregorianToJalali(y, int(m), d)
	return jy
}
