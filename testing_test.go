package crawlkeeper

import "time"

// T0 is the reference time of the package's tests.
var T0 = time.Date(2025, 9, 15, 12, 0, 0, 0, time.UTC)
