//go:build !race

package dates

const raceEnabled = false
