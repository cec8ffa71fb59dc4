package mongodb

import (
	"context"
	"time"
)

// SetCrashAt makes s fail with the error f returns at the named steps of
// its multi-step writes, as a process killed there would stop (f nil: never).
func SetCrashAt(s *Store, f func(step string) error) { s.crashAt = f }

// RepairAll repairs every move intent however young, as the repair does a
// staleIntent after a crash.
func RepairAll(s *Store) error { return s.repair(context.Background(), time.Time{}) }
