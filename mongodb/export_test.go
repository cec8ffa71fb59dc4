package mongodb

import (
	"context"
	"time"
)

// SetCrashAt makes s fail with the error f returns at the named steps of
// its multi-step writes, as a process killed there would stop (f nil: never).
func SetCrashAt(s *Store, f func(step string) error) { s.crashAt = f }

// SetClock makes s read the time of its rekey intents from f (nil: the
// wall clock), so tests can make an intent stale without waiting.
func SetClock(s *Store, f func() time.Time) { s.clock = f }

// RepairAll repairs every move intent however young, settles every rekey
// intent (a planned merge is rolled back) and clears left-over merge
// marks, as the repair does a staleIntent after a crash.
func RepairAll(s *Store) error {
	ctx := context.Background()
	if err := s.repair(ctx, time.Time{}); err != nil {
		return err
	}
	if err := s.repairRekeys(ctx, time.Time{}, true); err != nil {
		return err
	}
	return s.clearLeftMarks(ctx)
}
