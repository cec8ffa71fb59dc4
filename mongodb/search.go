package mongodb

import (
	"context"
	"fmt"
	"strings"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Full-text search. Each record document carries search_text, its folded
// and tokenised text (crawlkeeper.SearchText), written with the document
// itself, so every insert, change, move and delete carries it along. On
// MongoDB a text index over search_text (default_language "none": no
// stemming or stop words, which the other stores do not apply either)
// finds the candidates: $text matches documents with any of the query's
// whole words and scores them (textScore). $text has no prefix search,
// and its phrase and AND rules differ from the other engines', so each
// query term is also applied as an anchored regular expression on
// search_text (crawlkeeper.SearchTerm.Regexp), which makes the result set
// exactly the one every store returns. A query made only of prefixes
// cannot use the text index and scans the filtered collection.
//
// FerretDB (1.24) has no text indexes and no $text: there the store
// searches with the regular expressions alone, finds the same records,
// and does not rank them (SearchWithoutIndex says why).

var _ crawlkeeper.SearchStore = (*Store)(nil)

// searchIndexName names the text index of both record collections.
const searchIndexName = "search_text"

// createSearchIndexes creates the text indexes, unless the server is
// FerretDB, which has none; it notes that case for SearchWithoutIndex.
func (s *Store) createSearchIndexes(ctx context.Context) error {
	var info bson.M
	if err := s.db.RunCommand(ctx, bson.D{{Key: "buildInfo", Value: 1}}).Decode(&info); err != nil {
		return fmt.Errorf("buildInfo: %w", err)
	}
	if _, ok := info["ferretdbVersion"]; ok {
		s.noTextIndex = "the server is FerretDB, which has no text indexes ($text): search scans with regular expressions and does not rank results"
		return nil
	}
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		m := mongo.IndexModel{Keys: bson.D{{Key: "search_text", Value: "text"}},
			Options: options.Index().SetName(searchIndexName).SetDefaultLanguage("none")}
		if _, err := c.Indexes().CreateOne(ctx, m); err != nil {
			return fmt.Errorf("%s: text index: %w", c.Name(), err)
		}
	}
	return nil
}

// SearchWithoutIndex implements crawlkeeper.SearchIndexReporter.
func (s *Store) SearchWithoutIndex() string { return s.noTextIndex }

// searchFilter renders a search plan as a MongoDB filter, and reports
// whether it uses $text (and so can be ranked by textScore).
func (s *Store) searchFilter(p *crawlkeeper.SearchPlan) (bson.D, bool) {
	filter := bson.D{}
	var words []string
	seen := map[string]bool{}
	for _, t := range p.Expr.Positive() {
		for i, tok := range t.Tokens {
			if (t.Prefix && i == len(t.Tokens)-1) || seen[tok] {
				continue
			}
			seen[tok] = true
			words = append(words, tok)
		}
	}
	text := s.noTextIndex == "" && len(words) > 0
	if text {
		// Unquoted words: $text matches documents with any of them; the
		// regular expressions below keep only the exact matches.
		filter = append(filter, bson.E{Key: "$text", Value: bson.D{{Key: "$search", Value: strings.Join(words, " ")}, {Key: "$language", Value: "none"}}})
	}
	var and bson.A
	for _, t := range p.Expr.Terms {
		re := bson.Regex{Pattern: t.Regexp("")}
		if t.Exclude {
			and = append(and, bson.D{{Key: "search_text", Value: bson.D{{Key: "$not", Value: re}}}})
		} else {
			and = append(and, bson.D{{Key: "search_text", Value: re}})
		}
	}
	filter = append(filter, bson.E{Key: "$and", Value: and})
	if p.Source != "" {
		filter = append(filter, bson.E{Key: "source", Value: p.Source})
	}
	if p.Round != "" {
		filter = append(filter, bson.E{Key: "last_round", Value: p.Round})
	}
	if p.Target != "" {
		filter = append(filter, bson.E{Key: "last_target", Value: p.Target})
	}
	if r := rangeOf(p.Since.UnixMicro(), !p.Since.IsZero(), p.Until.UnixMicro(), !p.Until.IsZero()); r != nil {
		filter = append(filter, bson.E{Key: "last_updated_at", Value: r})
	}
	if r := rangeOf(p.EventFrom.UnixMicro(), !p.EventFrom.IsZero(), p.EventTo.UnixMicro(), !p.EventTo.IsZero()); r != nil {
		filter = append(filter, bson.E{Key: "event_at", Value: r})
	}
	return filter, text
}

// rangeOf returns {$gte: from, $lt: to} with the bounds that are set.
func rangeOf(from int64, hasFrom bool, to int64, hasTo bool) bson.D {
	var r bson.D
	if hasFrom {
		r = append(r, bson.E{Key: "$gte", Value: from})
	}
	if hasTo {
		r = append(r, bson.E{Key: "$lt", Value: to})
	}
	return r
}

// Search implements crawlkeeper.SearchStore.
func (s *Store) Search(ctx context.Context, q crawlkeeper.SearchQuery) (*crawlkeeper.SearchPage, error) {
	p, err := q.Plan()
	if err != nil {
		return nil, err
	}
	c := s.active
	if p.Archived {
		c = s.archive
	}
	filter, text := s.searchFilter(p)
	var pipeline mongo.Pipeline
	pipeline = append(pipeline, bson.D{{Key: "$match", Value: filter}})
	if p.Order == crawlkeeper.SearchNewest {
		if a := p.After; a != nil {
			pipeline = append(pipeline, bson.D{{Key: "$match", Value: bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: "last_updated_at", Value: bson.D{{Key: "$lt", Value: a.UpdatedMicros}}}},
				bson.D{{Key: "last_updated_at", Value: a.UpdatedMicros}, {Key: "_id", Value: bson.D{{Key: "$lt", Value: a.ID}}}},
			}}}}})
		}
		pipeline = append(pipeline, bson.D{{Key: "$sort", Value: bson.D{{Key: "last_updated_at", Value: -1}, {Key: "_id", Value: -1}}}})
	} else if text {
		pipeline = append(pipeline, bson.D{{Key: "$addFields", Value: bson.D{{Key: "score", Value: bson.D{{Key: "$meta", Value: "textScore"}}}}}})
		if a := p.After; a != nil {
			pipeline = append(pipeline, bson.D{{Key: "$match", Value: bson.D{{Key: "$or", Value: bson.A{
				bson.D{{Key: "score", Value: bson.D{{Key: "$lt", Value: a.Score}}}},
				bson.D{{Key: "score", Value: a.Score}, {Key: "_id", Value: bson.D{{Key: "$gt", Value: a.ID}}}},
			}}}}})
		}
		pipeline = append(pipeline, bson.D{{Key: "$sort", Value: bson.D{{Key: "score", Value: -1}, {Key: "_id", Value: 1}}}})
	} else {
		// Without $text there is no score: every hit scores 0 and
		// relevance order is id order.
		if a := p.After; a != nil {
			pipeline = append(pipeline, bson.D{{Key: "$match", Value: bson.D{{Key: "_id", Value: bson.D{{Key: "$gt", Value: a.ID}}}}}})
		}
		pipeline = append(pipeline, bson.D{{Key: "$sort", Value: bson.D{{Key: "_id", Value: 1}}}})
	}
	pipeline = append(pipeline, bson.D{{Key: "$limit", Value: p.Limit + 1}})
	cur, err := c.Aggregate(ctx, pipeline)
	if err != nil {
		return nil, s.wrap("search", err)
	}
	defer cur.Close(ctx)
	var hits []crawlkeeper.SearchHit
	for cur.Next(ctx) {
		var d recordDoc
		if err := cur.Decode(&d); err != nil {
			return nil, s.wrap("search", err)
		}
		r, err := d.record()
		if err != nil {
			return nil, err
		}
		score, _ := cur.Current.Lookup("score").DoubleOK()
		hits = append(hits, crawlkeeper.SearchHit{Record: r, Score: score})
	}
	if err := cur.Err(); err != nil {
		return nil, s.wrap("search", err)
	}
	return p.FinishPage(hits), nil
}

// SetSearchText implements crawlkeeper.SearchStore: each update is
// conditioned on the record's version and counts as a write (rev).
func (s *Store) SetSearchText(ctx context.Context, updates []crawlkeeper.SearchTextUpdate) (int, error) {
	n := 0
	for _, archived := range []bool{false, true} {
		c := s.active
		if archived {
			c = s.archive
		}
		var models []mongo.WriteModel
		for _, u := range updates {
			if u.Archived != archived {
				continue
			}
			models = append(models, mongo.NewUpdateOneModel().
				SetFilter(bson.D{{Key: "_id", Value: u.ID}, {Key: "version", Value: u.Version}, unmarked}).
				SetUpdate(bson.D{{Key: "$set", Value: bson.D{{Key: "search_text", Value: u.Text}}}, {Key: "$inc", Value: bson.D{{Key: "rev", Value: 1}}}}))
		}
		if len(models) == 0 {
			continue
		}
		res, err := bulkChunks(ctx, c, models)
		if err != nil {
			return n, s.wrap("set search text", err)
		}
		n += int(res.ModifiedCount)
	}
	return n, nil
}

// checkSearch lists documents without search_text (written before search
// existed) and, on MongoDB, checks that both text indexes exist. The
// index entries themselves are MongoDB's to keep.
func (s *Store) checkSearch(ctx context.Context, add func(crawlkeeper.Violation)) error {
	for _, c := range []*mongo.Collection{s.active, s.archive} {
		if s.noTextIndex == "" {
			specs, err := c.Indexes().ListSpecifications(ctx)
			if err != nil {
				return s.wrap("check search", err)
			}
			found := false
			for _, sp := range specs {
				found = found || sp.Name == searchIndexName
			}
			if !found {
				add(crawlkeeper.Violation{Kind: "search_index", Message: fmt.Sprintf("the text index of %s is missing: reopen the store to create it", c.Name())})
			}
		}
		cur, err := c.Find(ctx, bson.D{{Key: "search_text", Value: bson.D{{Key: "$exists", Value: false}}}},
			options.Find().SetProjection(bson.D{{Key: "key", Value: 1}}).SetLimit(1000))
		if err != nil {
			return s.wrap("check search", err)
		}
		var docs []summaryDoc
		if err := cur.All(ctx, &docs); err != nil {
			return s.wrap("check search", err)
		}
		for _, d := range docs {
			add(crawlkeeper.SearchMissing(c.Name(), d.ID, d.Key))
		}
	}
	return nil
}
