package backfill

import "sort"

func sortGaps(g []Gap)       { sort.Slice(g, func(i, j int) bool { return g[i].From < g[j].From }) }
func sortStrings(s []string) { sort.Strings(s) }
