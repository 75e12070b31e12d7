package report

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/")

// goldenCase renders one fixture in one format.
type goldenCase struct {
	golden  string
	fixture string
	nvtx    string
	render  func(ctx context.Context, l loaded, w *bytes.Buffer) error
}

// hostileGolden prefixes the golden files of the hostile export: the
// hostile name goes everywhere the trace supplies text (rename,
// escape_test.go) before the rendering.
const hostileGolden = "hostile."

func goldenCases() []goldenCase {
	text := func(opt TextOptions) func(context.Context, loaded, *bytes.Buffer) error {
		return func(_ context.Context, l loaded, w *bytes.Buffer) error { return l.analysis.WriteText(w, opt) }
	}
	markdown := func(_ context.Context, l loaded, w *bytes.Buffer) error {
		return l.analysis.WriteMarkdown(w, MarkdownOptions{})
	}
	jsonDoc := func(_ context.Context, l loaded, w *bytes.Buffer) error { return l.analysis.WriteJSON(w) }
	html := func(ctx context.Context, l loaded, w *bytes.Buffer) error {
		return l.analysis.WriteHTML(ctx, w, HTMLOptions{Details: 3, Timelines: l.timelines})
	}
	perfetto := func(ctx context.Context, l loaded, w *bytes.Buffer) error {
		return l.analysis.WritePerfetto(ctx, w, l.timelines)
	}
	doctor := func(_ context.Context, l loaded, w *bytes.Buffer) error {
		return Diagnose(l.analysis).WriteText(w, TextOptions{Width: 100})
	}
	var cases []goldenCase
	for _, fx := range []string{"syncs_backtrace", "syncs_autograd", "syncs_lean", "multiproc_lean"} {
		cases = append(cases,
			goldenCase{fx + ".txt", fx + ".sqlite.gz", "", text(TextOptions{})},
			goldenCase{fx + ".md", fx + ".sqlite.gz", "", markdown},
			goldenCase{fx + ".json", fx + ".sqlite.gz", "", jsonDoc},
			goldenCase{fx + ".doctor.txt", fx + ".sqlite.gz", "", doctor},
		)
	}
	cases = append(cases,
		goldenCase{"syncs_backtrace.measured.w80.txt", "syncs_backtrace.sqlite.gz", "measured", text(TextOptions{Top: 5, Width: 80})},
		goldenCase{"syncs_backtrace.measured.md", "syncs_backtrace.sqlite.gz", "measured", markdown},
		goldenCase{"syncs_backtrace.html", "syncs_backtrace.sqlite.gz", "", html},
		goldenCase{"syncs_lean.measured.html", "syncs_lean.sqlite.gz", "measured", html},
		goldenCase{"multiproc_lean.html", "multiproc_lean.sqlite.gz", "", html},
		goldenCase{"syncs_backtrace.measured.perfetto.json", "syncs_backtrace.sqlite.gz", "measured", perfetto},
		goldenCase{"multiproc_lean.perfetto.json", "multiproc_lean.sqlite.gz", "", perfetto},
		// A real NVTX range (CUB's) with no sync inside.
		goldenCase{"syncs_backtrace.nosyncs.txt", "syncs_backtrace.sqlite.gz", "cub::DeviceReduce::Sum", text(TextOptions{})},
		goldenCase{"syncs_backtrace.nosyncs.md", "syncs_backtrace.sqlite.gz", "cub::DeviceReduce::Sum", markdown},
		goldenCase{"syncs_backtrace.nosyncs.html", "syncs_backtrace.sqlite.gz", "cub::DeviceReduce::Sum", html},
		goldenCase{"syncs_backtrace.nosyncs.json", "syncs_backtrace.sqlite.gz", "cub::DeviceReduce::Sum", jsonDoc},
	)
	// Every format of a real export whose text is hostile.
	for _, c := range []struct {
		golden string
		render func(context.Context, loaded, *bytes.Buffer) error
	}{
		{"txt", text(TextOptions{})}, {"w80.txt", text(TextOptions{Width: 80})}, {"md", markdown},
		{"html", html}, {"json", jsonDoc}, {"perfetto.json", perfetto}, {"doctor.txt", doctor},
	} {
		cases = append(cases, goldenCase{hostileGolden + c.golden, "multiproc_lean.sqlite.gz", "", c.render})
	}
	return cases
}

// loadCase loads a golden case's fixture, made hostile for the hostile
// golden files.
func loadCase(t *testing.T, tc goldenCase) loaded {
	l := load(t, tc.fixture, tc.nvtx)
	if strings.HasPrefix(tc.golden, hostileGolden) {
		rename(l.analysis, hostile)
		l.timelines = hostileTimeline{l.export}
	}
	return l
}

// TestGolden renders every format on the real fixtures and compares the
// bytes with testdata/*.golden; `go test ./report -update` rewrites them
// after an intended change, and the diff shows in review.
func TestGolden(t *testing.T) {
	for _, tc := range goldenCases() {
		t.Run(tc.golden, func(t *testing.T) {
			ctx := context.Background()
			l := loadCase(t, tc)
			var got bytes.Buffer
			if err := tc.render(ctx, l, &got); err != nil {
				t.Fatalf("render: %v", err)
			}
			// Deterministic: a second rendering gives the same bytes.
			var again bytes.Buffer
			if err := tc.render(ctx, loadCase(t, tc), &again); err != nil {
				t.Fatalf("render again: %v", err)
			}
			if !bytes.Equal(got.Bytes(), again.Bytes()) {
				t.Fatalf("two renderings differ")
			}
			if bytes.Contains(got.Bytes(), []byte("\x1b[")) {
				t.Errorf("colour codes in an uncoloured report")
			}
			path := filepath.Join("testdata", tc.golden+".golden")
			if *update {
				if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run: go test ./report -run TestGolden -update)", err)
			}
			if !bytes.Equal(got.Bytes(), want) {
				t.Errorf("%s differs from the output (go test ./report -run TestGolden -update rewrites it):\n%s", path, firstDiff(want, got.Bytes()))
			}
		})
	}
}

// firstDiff shows the first line that differs.
func firstDiff(want, got []byte) string {
	wl, gl := bytes.Split(want, []byte("\n")), bytes.Split(got, []byte("\n"))
	for i := 0; i < max(len(wl), len(gl)); i++ {
		var w, g []byte
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if !bytes.Equal(w, g) {
			return "line " + itoa(i+1) + ":\n  want: " + string(w) + "\n  got:  " + string(g)
		}
	}
	return "(same lines, different bytes)"
}
