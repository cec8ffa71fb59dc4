package crawlkeeper

import "context"

// recordLister is the part of a store SampleDateErrors reads.
type recordLister interface {
	List(ctx context.Context, q RecordQuery) (*RecordPage, error)
}

// Bounds of SampleDateErrors: it looks at the newest active records of a
// source only, so that stats stay cheap on large stores.
const (
	sampleDateErrorsScan = 2000
	sampleDateErrorsPage = 500
)

// SampleDateErrors fills DateErrorSamples of each source of s that has
// active date errors with up to n distinct messages naming the field, read
// from the source's most recently updated active records (at most a few
// thousand of them). A source whose errors lie in older records gets no
// samples; its counts still tell.
func SampleDateErrors(ctx context.Context, st recordLister, cfg *Config, s *Stats, n int) error {
	if cfg == nil {
		cfg = &Config{}
	}
	for name, ss := range s.Sources {
		if ss.ActiveDateErrors == 0 {
			continue
		}
		pol, err := cfg.Policy(name)
		if err != nil {
			return err
		}
		seen := map[string]bool{}
		q := RecordQuery{Source: name, Order: OrderNewest, Limit: sampleDateErrorsPage}
		for scanned := 0; scanned < sampleDateErrorsScan && len(ss.DateErrorSamples) < n; {
			page, err := st.List(ctx, q)
			if err != nil {
				return err
			}
			for _, r := range page.Records {
				if len(r.DateErrors) == 0 || r.Source != name {
					continue
				}
				item, _, err := DecodeItem(r.Item, Meta{})
				if err != nil {
					continue
				}
				for _, e := range DateErrorFields(pol, item, r.DateErrors) {
					if msg := e.String(); !seen[msg] && len(ss.DateErrorSamples) < n {
						seen[msg] = true
						ss.DateErrorSamples = append(ss.DateErrorSamples, msg)
					}
				}
			}
			scanned += len(page.Records)
			if page.Next == "" {
				break
			}
			q.Cursor = page.Next
		}
	}
	return nil
}
