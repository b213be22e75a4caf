package cli

import (
	"flag"
	"fmt"
	"sort"
	"strings"
)

// DidYouMean is " (did you mean X?)" for the command closest to a
// mistyped one, or "" when none is close: `herald wacth` names watch.
func DidYouMean(typed string) string {
	names := []string{"version"}
	for n := range commands {
		names = append(names, n)
	}
	if n := closest(typed, names); n != "" {
		return fmt.Sprintf(" (did you mean %q?)", n)
	}
	return ""
}

// flagMessage is the flag package's error in Herald's words: flags named
// --name, and an unknown one as "unknown flag --tokn (did you mean
// --token?)" when a flag of fs is close to it.
func flagMessage(fs *flag.FlagSet, err error) string {
	typed, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: -")
	if !ok {
		return dashDash(err.Error())
	}
	msg := "unknown flag " + dashDash("-"+typed)
	var names []string
	fs.VisitAll(func(f *flag.Flag) { names = append(names, f.Name) })
	if n := closest(strings.TrimPrefix(typed, "-"), names); n != "" {
		msg += fmt.Sprintf(" (did you mean %s?)", dashDash("-"+n))
	}
	return msg
}

// closest is the name nearest to typed by edit distance, if it is near
// enough to be a typo (at most 2 edits, fewer than half its letters);
// "" otherwise or when two are equally near.
func closest(typed string, names []string) string {
	typed = strings.ToLower(typed)
	if typed == "" {
		return ""
	}
	sort.Strings(names)
	best, bestD, tie := "", 3, false
	for _, n := range names {
		d := editDistance(typed, n)
		if d*2 >= len(n) {
			continue
		}
		switch {
		case d < bestD:
			best, bestD, tie = n, d, false
		case d == bestD:
			tie = true
		}
	}
	if tie {
		return ""
	}
	return best
}

// editDistance is the Damerau-Levenshtein distance (optimal string
// alignment): a swap of two neighbours counts as one edit.
func editDistance(a, b string) int {
	ra, rb := []rune(a), []rune(b)
	d := make([][]int, len(ra)+1)
	for i := range d {
		d[i] = make([]int, len(rb)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(ra); i++ {
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(ra)][len(rb)]
}
