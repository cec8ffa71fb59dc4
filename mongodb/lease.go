package mongodb

import (
	"context"
	"errors"
	"time"

	"github.com/crawlkeeper/crawlkeeper"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
)

var _ crawlkeeper.LeaseReader = (*Store)(nil)

// LeaseOwner implements crawlkeeper.LeaseReader.
func (s *Store) LeaseOwner(ctx context.Context, name string, now time.Time) (string, time.Time, error) {
	var d struct {
		Owner     string `bson:"owner"`
		ExpiresAt int64  `bson:"expires_at"`
	}
	err := s.leases.FindOne(ctx, bson.D{{Key: "_id", Value: name}}).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) || err == nil && d.ExpiresAt <= now.UnixMicro() {
		return "", time.Time{}, nil
	}
	if err != nil {
		return "", time.Time{}, s.wrap("read lease "+name, err)
	}
	return d.Owner, crawlkeeper.MicrosTime(d.ExpiresAt), nil
}
