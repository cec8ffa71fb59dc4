package sqlite

// RecentLifetimesQuery lets the tests check the query's plan.
const RecentLifetimesQuery = recentLifetimesQuery
