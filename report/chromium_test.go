package report

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium finds a headless browser: $NSYSSYNC_CHROMIUM, else Debian's
// chromium. scripts/check-html.sh installs it and runs these tests.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("NSYSSYNC_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Skip("no chromium: scripts/check-html.sh installs Debian's chromium and runs this test")
	return ""
}

// runChromium runs headless chromium on a page with extra arguments and
// returns its stdout.
func runChromium(t *testing.T, browser, page string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--hide-scrollbars",
		"--no-first-run", "--user-data-dir=" + t.TempDir()}
	cmd := exec.CommandContext(ctx, browser, append(append(base, args...), "file://"+page)...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium: %v\n%s", err, errb.String())
	}
	return out.Bytes()
}

// TestHTMLInChromium renders a real report, opens it in headless
// Chromium, and checks the screenshot: the sites table's header and the
// timeline's sync, GPU ops and bubble are drawn. It also checks the DOM
// Chromium built: one table row per site, one timeline per top site, no
// script element. NSYSSYNC_SCREENSHOT=FILE keeps the PNG.
func TestHTMLInChromium(t *testing.T) {
	browser := chromium(t)
	l := load(t, "syncs_backtrace.sqlite.gz", "measured")
	dir := t.TempDir()
	page := filepath.Join(dir, "report.html")
	var b bytes.Buffer
	if err := l.analysis.WriteHTML(context.Background(), &b, HTMLOptions{Details: 3, Timelines: l.export}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}

	dom := string(runChromium(t, browser, page, "--dump-dom"))
	if n := strings.Count(dom, `<svg class="timeline"`); n != 3 {
		t.Errorf("DOM has %d timelines, want 3", n)
	}
	if n := strings.Count(dom, `<tr><td><a href="#s`); n != len(l.analysis.Sites) {
		t.Errorf("DOM has %d site rows, want %d", n, len(l.analysis.Sites))
	}
	if strings.Contains(dom, "<script") {
		t.Errorf("DOM has a script element")
	}

	shot := filepath.Join(dir, "report.png")
	if keep := os.Getenv("NSYSSYNC_SCREENSHOT"); keep != "" {
		shot = keep
	}
	runChromium(t, browser, page, "--window-size=1100,2600", "--screenshot="+shot)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot: %v", err)
	}
	// Colours of the stylesheet (templates/report.html.tmpl). The bubble
	// is #edc948 at 45% over the lane's #f6f8fa, a colour only timelines
	// have; the other timeline colours are counted near the bubbles only,
	// so that the legend's swatches do not count.
	bubble := color.RGBA{242, 227, 170, 255}
	near := timelineRows(img, bubble, 120)
	want := []struct {
		what  string
		color color.RGBA
		rows  []bool // nil: the whole page
		min   int
	}{
		{"sites table header (#24292f)", color.RGBA{0x24, 0x29, 0x2f, 255}, nil, 5000},
		{"GPU idle after the sync (bubble)", bubble, nil, 300},
		{"the sync's calls (#e15759) in timelines", color.RGBA{0xe1, 0x57, 0x59, 255}, near, 300},
		{"GPU copies (#f28e2b) in timelines", color.RGBA{0xf2, 0x8e, 0x2b, 255}, near, 20},
		{"timeline lanes (#f6f8fa)", color.RGBA{0xf6, 0xf8, 0xfa, 255}, near, 5000},
	}
	var counts []int
	for _, w := range want {
		n := countColor(img, w.color, w.rows)
		counts = append(counts, n)
		if n < w.min {
			t.Errorf("screenshot has %d pixels of %s, want at least %d", n, w.what, w.min)
		}
	}
	t.Logf("screenshot %s: %v pixels", shot, counts)
}

// TestHTMLEscapedInChromium: a real report whose symbols carry <script>
// builds no script element in Chromium, and the name shows as text.
func TestHTMLEscapedInChromium(t *testing.T) {
	browser := chromium(t)
	l := hostileAnalysis(t)
	page := filepath.Join(t.TempDir(), "hostile.html")
	var b bytes.Buffer
	if err := l.analysis.WriteHTML(context.Background(), &b, HTMLOptions{Details: 2, Timelines: hostileTimeline{l.export}}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(page, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	dom := string(runChromium(t, browser, page, "--dump-dom"))
	if strings.Contains(dom, "<script") || strings.Contains(dom, "<b>") {
		t.Errorf("the trace's text became elements")
	}
	if !strings.Contains(dom, "&lt;script&gt;alert") {
		t.Errorf("the name does not show as text")
	}
}

// countColor counts the pixels close to c, in the rows marked (all rows
// when rows is nil).
func countColor(img image.Image, c color.RGBA, rows []bool) int {
	n := 0
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		if rows != nil && !rows[y-b.Min.Y] {
			continue
		}
		for x := b.Min.X; x < b.Max.X; x++ {
			if closeTo(img.At(x, y), c) {
				n++
			}
		}
	}
	return n
}

// timelineRows marks the rows within margin of a row that holds colour c.
func timelineRows(img image.Image, c color.RGBA, margin int) []bool {
	b := img.Bounds()
	rows := make([]bool, b.Dy())
	for y := b.Min.Y; y < b.Max.Y; y++ {
		for x := b.Min.X; x < b.Max.X; x++ {
			if closeTo(img.At(x, y), c) {
				for k := max(0, y-b.Min.Y-margin); k < min(len(rows), y-b.Min.Y+margin); k++ {
					rows[k] = true
				}
				break
			}
		}
	}
	return rows
}

func closeTo(p color.Color, c color.RGBA) bool {
	r, g, b, _ := p.RGBA()
	near := func(v uint32, w uint8) bool { d := int(v>>8) - int(w); return d >= -6 && d <= 6 }
	return near(r, c.R) && near(g, c.G) && near(b, c.B)
}
