// Package words puts counts into words for the reports: "1 site",
// "2 sites", never "1 sites".
package words

import "strconv"

// Count is n followed by the form of the noun that fits it: Count(1,
// "site", "sites") is "1 site", Count(2, …) "2 sites".
func Count(n int, one, many string) string {
	return strconv.Itoa(n) + " " + Noun(n, one, many)
}

// Noun is the form of a noun that fits a count of n: one for 1, many
// otherwise (0 sites, 2 sites).
func Noun(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
