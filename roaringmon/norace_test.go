//go:build !race

package roaringmon_test

const raceEnabled = false
