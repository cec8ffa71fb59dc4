package redis

// SetMigrateStep sets the hook called after each chunk of the dictionary
// migration (nil removes it), so a test can stop the migration midway as
// a killed process would.
func SetMigrateStep(f func(next int64) error) { migrateStep = f }
