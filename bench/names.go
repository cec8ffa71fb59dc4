package bench

import (
	"math/rand/v2"
	"strings"
)

// Parts of the company names the monitor results use as crawl targets:
// half Chinese (city, brand, trade, legal form, a few of them branch
// offices), half English (brand, trade, sometimes a place, legal form),
// the mix a crawler of company registers and job boards visits.
var (
	zhCities = strings.Fields("北京 上海 广州 深圳 杭州 成都 武汉 南京 苏州 天津 重庆 西安 长沙 郑州 青岛 厦门 宁波 合肥 济南 大连 沈阳 昆明 福州 无锡 东莞 佛山 珠海 温州 石家庄 哈尔滨")
	zhBrand  = []rune("华达鑫恒盛泰瑞博宏信科创安嘉星源海天金联新德丰康美中远兴智云汇通易腾龙凯晨东方明光正诚和平永顺昌隆力众合伟业锦")
	zhTrades = strings.Fields("科技 网络科技 信息技术 电子商务 生物科技 医药 贸易 物流 建筑工程 房地产开发 餐饮管理 文化传媒 教育咨询 环保科技 新能源 机械设备 汽车服务 食品 服饰 投资管理 商务咨询 广告 软件 智能科技 供应链管理 电气 化工 新材料 农业发展 旅游开发")
	zhForms  = []string{"有限公司", "有限公司", "有限公司", "有限公司", "股份有限公司", "有限责任公司", "集团有限公司"}
	enFirst  = strings.Fields("Blue Silver North Pacific Summit Bright Green Iron Crystal Golden Red Stone River Oak Eagle Lotus Star Sun Delta Vertex Nova Apex Harbor Maple Falcon Jade Orient Sky Cedar Amber")
	enSecond = strings.Fields("field wood bridge gate line point view works stone path wave peak light core vale ridge port land mark craft")
	enTrades = strings.Fields("Technologies Software Logistics Trading Pharmaceuticals Capital Engineering Consulting Media Foods Energy Materials Robotics Semiconductor Holdings Biotech Analytics Systems Networks Solutions Industries Electronics Apparel Healthcare")
	enPlaces = []string{"(Shanghai)", "(Shenzhen)", "(Hong Kong)", "(Beijing)", "(Singapore)", "International", "Asia", "Global"}
	enForms  = []string{"Inc.", "Ltd.", "Co., Ltd.", "LLC", "Limited", "GmbH", "Pte. Ltd.", "Corporation", "PLC", "Group"}
)

// CompanyNames returns n distinct company names, the same for the same
// seed.
func CompanyNames(n int, seed uint64) []string {
	r := rand.New(rand.NewPCG(seed, 2024))
	pick := func(xs []string) string { return xs[r.IntN(len(xs))] }
	seen := make(map[string]bool, n)
	out := make([]string, 0, n)
	var b strings.Builder
	for len(out) < n {
		b.Reset()
		if r.IntN(2) == 0 {
			b.WriteString(pick(zhCities))
			if r.IntN(2) == 0 {
				b.WriteString("市")
			}
			for k := 2 + r.IntN(2); k > 0; k-- {
				b.WriteRune(zhBrand[r.IntN(len(zhBrand))])
			}
			b.WriteString(pick(zhTrades))
			b.WriteString(pick(zhForms))
			if r.IntN(10) == 0 {
				b.WriteString(pick(zhCities))
				b.WriteString("分公司")
			}
		} else {
			b.WriteString(pick(enFirst))
			b.WriteString(pick(enSecond))
			b.WriteByte(' ')
			b.WriteString(pick(enTrades))
			b.WriteByte(' ')
			if r.IntN(4) == 0 {
				b.WriteString(pick(enPlaces))
				b.WriteByte(' ')
			}
			b.WriteString(pick(enForms))
		}
		s := b.String()
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}
