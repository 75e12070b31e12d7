package triage

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

// A night split into three shards, each writing JSON Lines and a
// database, merges back into exactly what one unsplit batch gives.
func TestShardMergeRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir, good, bad := nightDir(t)
	inputs := Expand([]string{dir})
	out := t.TempDir()

	whole := collect(t, inputs, Options{Analysis: noEstimate, Jobs: 2, KeepSyncs: true})
	wholeDB, err := OpenDB(ctx, filepath.Join(out, "whole.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer wholeDB.Close()
	recordRun(t, wholeDB, "night", whole)

	const n = 3
	var lineFiles, dbFiles []string
	taken := 0
	for i := range n {
		share := Shard{i, n}.Select(inputs)
		taken += len(share)
		results := collect(t, share, Options{Analysis: noEstimate, Jobs: 2, KeepSyncs: true})
		var buf bytes.Buffer
		for _, r := range results {
			WriteLine(&buf, r)
		}
		lf := filepath.Join(out, fmt.Sprintf("shard-%d.jsonl", i))
		os.WriteFile(lf, buf.Bytes(), 0o644)
		lineFiles = append(lineFiles, lf)

		df := filepath.Join(out, fmt.Sprintf("shard-%d.db", i))
		sdb, err := OpenDB(ctx, df)
		if err != nil {
			t.Fatal(err)
		}
		id, _ := sdb.BeginRun(ctx, RunInfo{Label: "night", Shard: Shard{i, n}.String()})
		for _, r := range results {
			sdb.AddResult(ctx, id, r)
		}
		sdb.FinishRun(ctx, id)
		sdb.Close()
		dbFiles = append(dbFiles, df)
	}
	if taken != len(good)+len(bad) {
		t.Fatalf("shards took %d inputs of %d", taken, len(good)+len(bad))
	}

	// JSON Lines: every trace once, each document as the whole batch made it.
	byPath := map[string]Result{}
	for _, r := range whole {
		byPath[r.Path] = r
	}
	var merged bytes.Buffer
	st, err := MergeLines(ctx, lineFiles, &merged, nil)
	if err != nil || st.Traces != len(whole) || st.Failed != len(bad) || st.Duplicates != 0 {
		t.Fatalf("merge lines: %+v, %v", st, err)
	}
	seen := 0
	ReadLines(&merged, "merged", func(l Line) error {
		seen++
		r, want := l.Result(), byPath[l.Trace.Path]
		if (r.Err == nil) != (want.Err == nil) || (r.Err == nil && (r.Doc.Totals != want.Doc.Totals || len(r.Doc.Syncs) != len(want.Doc.Syncs))) {
			t.Errorf("%s: merged line differs from the whole batch", l.Trace.Path)
		}
		return nil
	})
	if seen != len(whole) {
		t.Errorf("%d merged lines, want %d", seen, len(whole))
	}
	// Merging the same files again skips what is there.
	st, _ = MergeLines(ctx, append(lineFiles, lineFiles[0]), &bytes.Buffer{}, nil)
	if st.Duplicates == 0 && len(Shard{0, n}.Select(inputs)) > 0 {
		t.Errorf("a file merged twice gave no duplicates: %+v", st)
	}

	// Databases: the three shard runs become one run equal to the whole.
	mdb, err := OpenDB(ctx, filepath.Join(out, "merged.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer mdb.Close()
	for _, f := range dbFiles {
		if _, err := mdb.MergeDB(ctx, f, ""); err != nil {
			t.Fatal(err)
		}
	}
	again, err := mdb.MergeDB(ctx, dbFiles[0], "")
	if err != nil || again.Traces != 0 {
		t.Errorf("merging a shard twice added %d traces (%v)", again.Traces, err)
	}
	runs, _ := mdb.Runs(ctx)
	if len(runs) != 1 || runs[0].Traces != len(good) || runs[0].Failed != len(bad) || runs[0].Shard != "0/3,1/3,2/3" {
		t.Fatalf("merged runs: %+v", runs)
	}
	wholeRun, _ := wholeDB.ResolveRun(ctx, "latest")
	a, _ := wholeDB.Snapshot(ctx, wholeRun)
	b, _ := mdb.Snapshot(ctx, runs[0])
	d := Compare(a, b, 0)
	if a.BlockedNs != b.BlockedNs || len(a.Sites) != len(b.Sites) || d.Count(StatusSame) != len(d.Changes) {
		t.Errorf("merged run differs from the whole batch: %d vs %d sites, blocked %d vs %d", len(a.Sites), len(b.Sites), a.BlockedNs, b.BlockedNs)
	}
	for fp, s := range a.Sites {
		if m := b.Sites[fp]; m == nil || m.Count != s.Count || m.Traces != s.Traces || m.BlockedNs != s.BlockedNs || m.Dependency != s.Dependency {
			t.Errorf("site %s: whole %+v, merged %+v", fp, s, m)
		}
	}
}
