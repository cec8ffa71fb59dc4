//go:build race

package dates

// raceEnabled is set when the tests run under the race detector, where
// the corpus test reads a sample (see TestCorpus).
const raceEnabled = true
