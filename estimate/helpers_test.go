package estimate

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// corpusDir is the shared corpus of real exports beside the repository.
const corpusDir = "../../shared/corpus"

// fixture is a real export loaded for a test.
type fixture struct {
	x     *trace.Export
	tr    *trace.Trace
	sites []classify.Site
}

// loadFixture opens an export and loads its region (nvtx "" for the whole
// trace).
func loadFixture(t testing.TB, path, nvtx string) fixture {
	t.Helper()
	ctx := context.Background()
	x, err := trace.Open(ctx, path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { x.Close() })
	tr, err := x.Load(ctx, trace.LoadOptions{NVTX: nvtx})
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return fixture{x: x, tr: tr, sites: classify.Sites(tr)}
}

func (f fixture) run(t testing.TB, opt Options) *Result {
	t.Helper()
	res, err := Run(context.Background(), f.x, f.tr, f.sites, opt)
	if err != nil {
		t.Fatalf("Run(%s): %v", f.tr.Path, err)
	}
	return res
}

// timeline reads the timeline Run reads for the fixture's region.
func (f fixture) timeline(t testing.TB) *trace.Timeline {
	t.Helper()
	r := f.tr.Region
	w := trace.Interval{Start: r.Start, End: r.End}
	if r.Name != "" {
		w.End += min(r.Duration, 2_000_000_000)
	}
	tl, err := f.x.Timeline(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	return tl
}

func gtFixture(name string) string { return filepath.Join("../fixtures", "gt_"+name+".sqlite.gz") }

// siteWithRange returns the index of the site whose NVTX path holds the
// range.
func siteWithRange(t testing.TB, sites []classify.Site, name string) int {
	t.Helper()
	for i, s := range sites {
		for _, n := range s.NVTX {
			if n == name {
				return i
			}
		}
	}
	t.Fatalf("no site in range %q", name)
	return -1
}
