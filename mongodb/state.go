package mongodb

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// GetState implements crawlkeeper.StateStore.
func (s *Store) GetState(ctx context.Context, name string) ([]byte, error) {
	var d struct {
		Value []byte `bson:"value"`
	}
	err := s.state.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		return nil, nil
	}
	if err != nil {
		return nil, s.wrap("get state "+name, err)
	}
	if d.Value == nil {
		d.Value = []byte{}
	}
	return d.Value, nil
}

// PutState implements crawlkeeper.StateStore.
func (s *Store) PutState(ctx context.Context, name string, value []byte) error {
	if value == nil {
		value = []byte{}
	}
	_, err := s.state.ReplaceOne(ctx, bson.D{{Key: "_id", Value: name}}, bson.D{{Key: "_id", Value: name}, {Key: "value", Value: value}},
		options.Replace().SetUpsert(true))
	return s.wrap("put state "+name, err)
}

// AppendJournal implements crawlkeeper.StateStore; sequence numbers come
// from a sequence like record ids, so entries sort by _id in append order.
func (s *Store) AppendJournal(ctx context.Context, kind string, at time.Time, body json.RawMessage) error {
	if body == nil {
		body = json.RawMessage{}
	}
	seq, err := s.takeIDs(ctx, s.journalSeq, 1)
	if err != nil {
		return s.wrap("append journal", err)
	}
	_, err = s.journal.InsertOne(ctx, bson.D{{Key: "_id", Value: seq}, {Key: "kind", Value: kind}, {Key: "at", Value: at.UnixMicro()}, {Key: "body", Value: []byte(body)}})
	return s.wrap("append journal", err)
}

// Journal implements crawlkeeper.StateStore.
func (s *Store) Journal(ctx context.Context, kind string, limit int) ([]crawlkeeper.JournalEntry, error) {
	if limit <= 0 {
		limit = 100
	}
	cur, err := s.journal.Find(ctx, bson.D{{Key: "kind", Value: kind}}, options.Find().SetSort(bson.D{{Key: "_id", Value: -1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, s.wrap("journal", err)
	}
	var docs []struct {
		Seq  int64  `bson:"_id"`
		Kind string `bson:"kind"`
		At   int64  `bson:"at"`
		Body []byte `bson:"body"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.wrap("journal", err)
	}
	out := make([]crawlkeeper.JournalEntry, 0, len(docs))
	for _, d := range docs {
		out = append(out, crawlkeeper.JournalEntry{Seq: d.Seq, Kind: d.Kind, At: crawlkeeper.MicrosTime(d.At), Body: d.Body})
	}
	return out, nil
}

// AcquireLease implements crawlkeeper.StateStore. The owner renews with
// an update conditioned on being the owner; anyone else first deletes the
// lease if it has expired, then inserts it: the unique _id lets exactly
// one of several processes racing for a free or expired lease insert it.
func (s *Store) AcquireLease(ctx context.Context, name, owner string, ttl time.Duration, now time.Time) (bool, error) {
	what := "acquire lease " + name
	expires := now.Add(ttl).UnixMicro()
	res, err := s.leases.UpdateOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "owner", Value: owner}},
		bson.D{{Key: "$set", Value: bson.D{{Key: "expires_at", Value: expires}}}})
	if err != nil {
		return false, s.wrap(what, err)
	}
	if res.MatchedCount == 1 {
		return true, nil
	}
	if _, err := s.leases.DeleteOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "expires_at", Value: bson.D{{Key: "$lte", Value: now.UnixMicro()}}}}); err != nil {
		return false, s.wrap(what, err)
	}
	_, err = s.leases.InsertOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "owner", Value: owner}, {Key: "expires_at", Value: expires}})
	if mongo.IsDuplicateKeyError(err) {
		return false, nil
	}
	if err != nil {
		return false, s.wrap(what, err)
	}
	return true, nil
}

// ReleaseLease implements crawlkeeper.StateStore.
func (s *Store) ReleaseLease(ctx context.Context, name, owner string) error {
	_, err := s.leases.DeleteOne(ctx, bson.D{{Key: "_id", Value: name}, {Key: "owner", Value: owner}})
	return s.wrap("release lease "+name, err)
}

type deadLetterDoc struct {
	ID        int64  `bson:"_id"`
	Version   int64  `bson:"version"`
	Processor string `bson:"processor"`
	Error     string `bson:"error"`
	Failures  int    `bson:"failures"`
	At        int64  `bson:"at"`
}

// AddDeadLetter implements crawlkeeper.StateStore.
func (s *Store) AddDeadLetter(ctx context.Context, d crawlkeeper.DeadLetter) error {
	doc := deadLetterDoc{ID: d.ID, Version: d.Version, Processor: d.Processor, Error: d.Error, Failures: d.Failures, At: d.At.UnixMicro()}
	_, err := s.deadLetters.ReplaceOne(ctx, bson.D{{Key: "_id", Value: d.ID}}, doc, options.Replace().SetUpsert(true))
	return s.wrap(fmt.Sprintf("add dead letter %d", d.ID), err)
}

// DeadLetters implements crawlkeeper.StateStore.
func (s *Store) DeadLetters(ctx context.Context, limit int) ([]crawlkeeper.DeadLetter, error) {
	if limit <= 0 {
		limit = 1000
	}
	cur, err := s.deadLetters.Find(ctx, bson.D{}, options.Find().SetSort(bson.D{{Key: "at", Value: 1}, {Key: "_id", Value: 1}}).SetLimit(int64(limit)))
	if err != nil {
		return nil, s.wrap("dead letters", err)
	}
	var docs []deadLetterDoc
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.wrap("dead letters", err)
	}
	out := make([]crawlkeeper.DeadLetter, 0, len(docs))
	for _, d := range docs {
		out = append(out, crawlkeeper.DeadLetter{ID: d.ID, Version: d.Version, Processor: d.Processor, Error: d.Error, Failures: d.Failures, At: crawlkeeper.MicrosTime(d.At)})
	}
	return out, nil
}

// RemoveDeadLetters implements crawlkeeper.StateStore: the ids are read,
// then deleted by those ids, so the ids returned are the ones removed.
func (s *Store) RemoveDeadLetters(ctx context.Context, ids []int64) ([]int64, error) {
	filter := bson.D{}
	if ids != nil {
		if len(ids) == 0 {
			return []int64{}, nil
		}
		filter = bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}}
	}
	cur, err := s.deadLetters.Find(ctx, filter, options.Find().SetProjection(bson.D{{Key: "_id", Value: 1}}).SetSort(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, s.wrap("remove dead letters", err)
	}
	var docs []struct {
		ID int64 `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, s.wrap("remove dead letters", err)
	}
	out := make([]int64, 0, len(docs))
	for _, d := range docs {
		out = append(out, d.ID)
	}
	if len(out) == 0 {
		return out, nil
	}
	_, err = s.deadLetters.DeleteMany(ctx, bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: out}}}})
	return out, s.wrap("remove dead letters", err)
}
