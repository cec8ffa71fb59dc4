package dates

import (
	"fmt"
	"testing"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
)

func TestSmoke(t *testing.T) {
	p := New()
	now := time.Date(2024, 5, 20, 12, 0, 0, 0, time.UTC)
	in := []string{"2024-05-15T10:30:00Z", "2024-05-15", "2024-05-15 10:30", "20240515T103000Z", "1715769000", "1715769000123",
		"Mon, 02 Jan 2006 15:04:05 MST", "Mon, 02 Jan 2006 15:04:05 -0700", "Monday, 02-Jan-06 15:04:05 MST", "Mon Jan  2 15:04:05 2006", "Mon Jan 02 15:04:05 -0700 2006", "Mon Jan 2 15:04:05 MST 2006",
		"May 15, 2024", "15 May 2024", "Wednesday, May 15, 2024 10:30 AM", "15-May-2024", "15th May 2024", "May 15th, 2024", "Sept. 15, 2024",
		"15.05.2024", "05/15/2024", "05/06/2024", "2024/05/15", "15 05 2024", "15/05/24", "1.2.3",
		"15 мая 2024", "15 maja 2024", "15 de mayo de 2024", "15. Mai 2024", "le 15 mai 2024", "15 maggio 2024", "15 de maio de 2024", "15 mei 2024", "15 Mayıs 2024",
		"15 مايو 2024", "۲۶ اردیبهشت ۱۴۰۳", "١٥ مايو ٢٠٢٤", "15 मई 2024", "१५ मई २०२४",
		"2024年5月15日", "2024年05月15日 10時30分", "2024.5.15", "令和6年5月15日", "平成31年4月30日", "令和元年5月1日", "R6.5.15", "H31.4.30", "2024년 5월 15일 오후 3시 30분", "2024年5月15日 星期三", "2024年5月15日 下午3点", "２０２４年５月１５日", "2024年5月15日（水）",
		"today", "yesterday", "tomorrow", "now", "3 days ago", "in 2 weeks", "2 hours ago", "last Monday", "next Friday", "a week ago", "3日前", "昨日", "明日", "3天前", "昨天", "前天", "3일 전", "어제",
		"vor 3 Tagen", "il y a 3 jours", "hace 3 días", "3 giorni fa", "há 3 dias", "3 dagen geleden", "3 дня назад", "3 dni temu", "3 gün önce", "gestern", "aujourd'hui", "vor einer Woche", "неделю назад",
		"May 15–17, 2024", "May 15 - June 2, 2024", "15–17 May 2024", "2024/5/15～5/17", "2024-05-15 to 2024-05-17", "from May 15 until May 20, 2024", "5月15日～17日", "15-17 May 2024",
		"May 15", "5月15日", "hello", "N/A", "TBD", "", "12345abc", "rolling", "ASAP", "10:30 PM EST May 15 2024", "May 15, 2024 10:30 PM IST", "yesterday at 10:30 PM", "15 октября 2023 г.",
		"15 ตุลาคม 2567", "15 října 2024", "15 maj 2024", "Room 12", "v1.2.3", "15 Οκτωβρίου 2024",
	}
	for _, s := range in {
		for _, rs := range []bool{false} {
			st := time.Now()
			d, err := p.ParseDate(s, crawlkeeper.DateOptions{Now: now, RangeStart: rs})
			if err != nil {
				fmt.Printf("%-40q ERR %v (%v)\n", s, err, time.Since(st))
				continue
			}
			fmt.Printf("%-40q %s %v (%v)\n", s, d.Time.Format(time.RFC3339Nano), d.DateOnly, time.Since(st))
		}
	}
}
