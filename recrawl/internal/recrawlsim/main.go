// Command recrawlsim runs the recrawl simulator with the in-memory store
// and prints each policy's freshness, the bench's rows and where each
// policy spent its fetches; with -svg it writes the freshness chart of
// the first distribution's first seed. docs/RECRAWL.md's figures and chart
// come from
//
//	go run ./recrawl/internal/recrawlsim -rates all -seeds 3 -classes -svg docs/recrawl-freshness.svg
package main

import (
	"context"
	"flag"
	"fmt"
	"math"
	"os"
	"runtime"
	"strings"
	"sync"

	"github.com/crawlkeeper/crawlkeeper/recrawl"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "recrawlsim:", err)
		os.Exit(1)
	}
}

func run() error {
	pages := flag.Int("pages", 10000, "simulated pages")
	days := flag.Int("days", 60, "simulated days")
	measureFrom := flag.Int("measure-from", 30, "freshness is averaged from this day on")
	rates := flag.String("rates", "default", `comma-separated rate distributions, or "all" for every preset (`+strings.Join(recrawl.PresetNames(), ", ")+`)`)
	seeds := flag.Int("seeds", 1, "seeds per distribution (1, 2, ...)")
	policies := flag.String("policies", "uniform,nutch,advisor,oracle", "comma-separated policies (uniform, nutch, advisor, oracle, index, known-after-K)")
	strict := flag.Bool("strict", false, "the advisor fetches only due records (no Fill)")
	nutchFill := flag.Bool("nutch-fill", false, "Nutch's generator fills unused budget with the pages due soonest")
	nutchLastModified := flag.Bool("nutch-last-modified", false, "the simulated server sends a true Last-Modified header (feeds Nutch's sync_delta)")
	noLog := flag.Bool("no-log-counter", false, "the store does not keep ChangedLogSeconds")
	classes := flag.Bool("classes", false, "print fetches per page and freshness by change interval")
	svg := flag.String("svg", "", "write the first distribution's freshness chart (seed 1) to this file")
	flag.Parse()

	specs := strings.Split(*rates, ",")
	if *rates == "all" {
		specs = append([]string{"default"}, without(recrawl.PresetNames(), "default")...)
	}
	type job struct {
		spec string
		seed int
		rep  recrawl.SimReport
		err  error
	}
	var jobs []*job
	for _, spec := range specs {
		for s := 1; s <= *seeds; s++ {
			jobs = append(jobs, &job{spec: spec, seed: s})
		}
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		r, err := recrawl.ParseRates(j.spec)
		if err != nil {
			return err
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			nutch := recrawl.DefaultNutchConfig()
			nutch.Fill, nutch.LastModified = *nutchFill, *nutchLastModified
			j.rep, j.err = recrawl.Simulate(context.Background(), recrawl.SimConfig{
				Pages: *pages, Rates: &r, Seed: uint64(j.seed), Days: *days, MeasureFrom: *measureFrom,
				Policies: strings.Split(*policies, ","), AdvisorStrict: *strict, Nutch: &nutch,
				NewStore: func(string) (recrawl.Store, error) {
					return &recrawl.MemStore{DropChangedLog: *noLog}, nil
				},
			})
		}()
	}
	wg.Wait()
	for _, j := range jobs {
		if j.err != nil {
			return fmt.Errorf("%s seed %d: %w", j.spec, j.seed, j.err)
		}
	}

	for _, spec := range specs {
		var reps []recrawl.SimReport
		for _, j := range jobs {
			if j.spec == spec {
				reps = append(reps, j.rep)
			}
		}
		fmt.Printf("== %s (%s), %d pages, %d seeds\n", spec, ratesSpec(spec), *pages, len(reps))
		for _, res := range reps[0].Results {
			var f, nh []float64
			never := 0
			for _, rep := range reps {
				p, _ := rep.Result(res.Policy)
				f = append(f, p.Freshness)
				if p.NewHours < 0 { // never fetched: not an hour count
					never++
				} else {
					nh = append(nh, p.NewHours)
				}
			}
			fetched := "never"
			if len(nh) > 0 {
				fetched = spread(nh, 1) + " h"
			}
			if never > 0 && len(nh) > 0 {
				fetched += fmt.Sprintf(", never on %d of %d seeds", never, len(reps))
			}
			fmt.Printf("  %-13s freshness days %d-%d %s  new target fetched after %s\n", res.Policy, reps[0].Config.MeasureFrom+1, reps[0].Config.Days, spread(f, 4), fetched)
		}
		rows := map[string][]float64{}
		var order []string
		for _, rep := range reps {
			for _, row := range rep.Rows() {
				if _, ok := rows[row.Name]; !ok {
					order = append(order, row.Name)
				}
				rows[row.Name] = append(rows[row.Name], row.Value)
			}
		}
		for _, name := range order {
			fmt.Printf("  %-20s %s\n", name, spread(rows[name], 3))
		}
		if *classes {
			printClasses(reps[0])
		}
	}
	if *svg != "" {
		rep := jobs[0].rep
		title := fmt.Sprintf("Freshness per day, %d pages, budget %d fetches/day, rates: %s", rep.Config.Pages, int(rep.Config.Budget), jobs[0].spec)
		if err := os.WriteFile(*svg, recrawl.Chart(rep, title), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// printClasses prints, per class of true change interval, each policy's
// fetches per page and mean freshness over the measured days.
func printClasses(rep recrawl.SimReport) {
	bounds := []float64{1.0 / 24, 0.25, 1, 3, 10, 30, 90, math.Inf(1)}
	names := []string{"< 1h", "1h-6h", "6h-1d", "1d-3d", "3d-10d", "10d-30d", "30d-90d", "> 90d", "static"}
	class := func(rate float64) int {
		if rate == 0 {
			return len(names) - 1
		}
		iv := 1 / (rate * 86400)
		for k, b := range bounds {
			if iv < b {
				return k
			}
		}
		return len(bounds) - 1
	}
	n := rep.Config.Pages
	count := make([]int, len(names))
	for i := 0; i < n; i++ {
		count[class(rep.Rates[i])]++
	}
	fmt.Printf("  %-13s", "interval")
	for k, name := range names {
		if count[k] > 0 {
			fmt.Printf(" %13s", fmt.Sprintf("%s (%d)", name, count[k]))
		}
	}
	fmt.Println()
	for _, res := range rep.Results {
		fetches := make([]float64, len(names))
		fresh := make([]float64, len(names))
		for i := 0; i < n; i++ {
			k := class(rep.Rates[i])
			fetches[k] += float64(res.PageFetches[i])
			fresh[k] += res.PageFreshness[i]
		}
		fmt.Printf("  %-13s", res.Policy)
		for k := range names {
			if count[k] > 0 {
				fmt.Printf(" %13s", fmt.Sprintf("%.1f / %.2f", fetches[k]/float64(count[k]), fresh[k]/float64(count[k])))
			}
		}
		fmt.Println()
	}
	fmt.Println("  (fetches per page / mean freshness, over the measured days)")
}

// spread is the mean of vs, with the range when there are several.
func spread(vs []float64, digits int) string {
	lo, hi, sum := math.Inf(1), math.Inf(-1), 0.0
	for _, v := range vs {
		lo, hi, sum = math.Min(lo, v), math.Max(hi, v), sum+v
	}
	mean := sum / float64(len(vs))
	if len(vs) == 1 {
		return fmt.Sprintf("%.*f", digits, mean)
	}
	return fmt.Sprintf("%.*f (%.*f-%.*f)", digits, mean, digits, lo, digits, hi)
}

func ratesSpec(spec string) string {
	if p, ok := recrawl.Presets[spec]; ok {
		return p
	}
	return spec
}

func without(list []string, drop string) []string {
	var out []string
	for _, s := range list {
		if s != drop {
			out = append(out, s)
		}
	}
	return out
}
