package mongodb

// SetCrashAt makes s fail with the error f returns at the named steps of
// its multi-step writes, as a process killed there would stop (f nil: never).
func SetCrashAt(s *Store, f func(step string) error) { s.crashAt = f }
