package report

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/trace"
)

// refUsec is usec as fmt wrote it.
func refUsec(ns int64) json.Number {
	sign, abs := "", uint64(ns)
	if ns < 0 {
		sign, abs = "-", -abs
	}
	return json.Number(fmt.Sprintf("%s%d.%03d", sign, abs/1000, abs%1000))
}

// refWritePerfetto writes the Chrome trace with every event a chromeEvent
// with an args map, through encoding/json: what the hand-written events
// must equal.
func refWritePerfetto(a *Analysis, tl *trace.Timeline) []byte {
	var out bytes.Buffer
	bw := bufio.NewWriter(&out)
	enc := &eventWriter{w: bw}
	bw.WriteString(`{"displayTimeUnit":"ns","otherData":{"generator":"nsyssync","trace":`)
	path, _ := json.Marshal(a.Trace.Path)
	bw.Write(path)
	bw.WriteString(`},"traceEvents":[`)
	a.perfettoNames(enc, tl)
	for _, c := range tl.Calls {
		enc.add(chromeEvent{Name: c.Name, Cat: "cuda_api", Ph: "X", Ts: refUsec(c.Start), Dur: refUsec(c.End - c.Start),
			Pid: c.GlobalTid.Pid(), Tid: c.GlobalTid.Tid(), Args: map[string]any{"correlation_id": c.CorrelationID}})
	}
	for _, op := range tl.Ops {
		args := map[string]any{"correlation_id": op.CorrelationID, "pid": op.GlobalPid.Pid()}
		if op.Bytes > 0 {
			args["bytes"] = op.Bytes
		}
		enc.add(chromeEvent{Name: op.Name, Cat: string(op.Kind), Ph: "X", Ts: refUsec(op.Start), Dur: refUsec(op.End - op.Start),
			Pid: perfettoGPUPidBase + int64(op.Device), Tid: int64(op.Stream), Args: args})
	}
	t := a.Trace
	siteOf := a.siteIndex()
	for i := range t.Syncs {
		s := &t.Syncs[i]
		if siteOf[i] < 0 {
			continue
		}
		site := &a.Sites[siteOf[i]]
		id := "e" + itoa(i+1)
		args := map[string]any{
			"sync": id, "site": site.ID, "fingerprint": classify.Fingerprint(site), "dependency": string(site.Dependency),
			"category": site.Category, "confidence": site.Confidence, "location": siteLabel(site), "what": What(s),
			"blocked_ns": s.Duration(), "waited_for": waited(s), "gpu_idle_after": idleAfter(s), "thread": s.GlobalTid.Tid(),
		}
		if len(site.Evidence) > 0 {
			args["evidence"] = strings.Join(site.Evidence, "; ")
		}
		if site.Fix != "" {
			args["fix"] = site.Fix
		}
		if a.Estimated() {
			args["site_estimated_savings_ns"] = a.SavingsNs(site)
		}
		if reason, ok := a.Allowed[site.ID]; ok {
			args["allowed"] = reason
		}
		name := fmt.Sprintf("%s %s: %s %s", id, site.ID, site.Dependency, site.Category)
		enc.add(chromeEvent{Name: name, Cat: "sync", Ph: "X", Ts: refUsec(s.Start), Dur: refUsec(s.Duration()),
			Pid: s.GlobalPid.Pid(), Tid: perfettoSyncTid, Args: args})
		if !s.Gap.DeviceBusy && s.Gap.IdleAfterNs > 0 && s.Device >= 0 {
			enc.add(chromeEvent{Name: "GPU idle after " + id, Cat: "bubble", Ph: "X", Ts: refUsec(s.End), Dur: refUsec(s.Gap.IdleAfterNs),
				Pid: perfettoGPUPidBase + int64(s.Device), Tid: perfettoBubbleTid,
				Args: map[string]any{"sync": id, "site": site.ID, "dependency": string(site.Dependency), "idle_ns": s.Gap.IdleAfterNs}})
		}
	}
	bw.WriteString("\n]}\n")
	bw.Flush()
	return out.Bytes()
}

func TestAppendUsec(t *testing.T) {
	for _, ns := range []int64{0, 1, -1, 999, 1000, -1000, 1001, -999999, 123456789, math.MaxInt64, math.MinInt64, math.MinInt64 + 1} {
		if got, want := usec(ns), refUsec(ns); got != want {
			t.Errorf("usec(%d) = %s, want %s", ns, got, want)
		}
	}
}

// TestPerfettoMatchesEncodingJSON writes real regions, a hostile one and
// one with estimates, allow-list reasons, empty evidence and fixes and
// times before zero, and compares the bytes with encoding/json's.
func TestPerfettoMatchesEncodingJSON(t *testing.T) {
	ctx := context.Background()
	check := func(name string, a *Analysis, tr TimelineReader) {
		t.Helper()
		var got bytes.Buffer
		if err := a.WritePerfetto(ctx, &got, tr); err != nil {
			t.Fatal(err)
		}
		tl, err := tr.Timeline(ctx, trace.Interval{Start: a.Trace.Region.Start, End: a.Trace.Region.End})
		if err != nil {
			t.Fatal(err)
		}
		if want := refWritePerfetto(a, tl); !bytes.Equal(got.Bytes(), want) {
			t.Errorf("%s differs from encoding/json's:\n%s", name, firstDiff(want, got.Bytes()))
		}
	}
	for _, fx := range []string{"syncs_backtrace.sqlite.gz", "syncs_autograd.sqlite.gz", "multiproc_lean.sqlite.gz"} {
		l := load(t, fx, "")
		check(fx, l.analysis, l.export)
	}
	l := hostileAnalysis(t)
	a := l.analysis
	a.Estimates = &Estimates{Sites: map[string]SiteEstimate{}}
	a.Allowed = map[string]string{}
	for i := range a.Sites {
		s := &a.Sites[i]
		a.Estimates.Sites[s.ID] = SiteEstimate{SavingsNs: int64(i*1000 - 500)}
		if i%2 == 0 {
			a.Allowed[s.ID] = hostile + "\u2028"
			s.Evidence, s.Fix = nil, ""
			s.Confidence = 1.0 / 3
		}
	}
	for i := range a.Trace.Syncs {
		s := &a.Trace.Syncs[i]
		s.Start -= 1 << 40
		if i%3 == 0 {
			s.Gap = trace.Gap{IdleAfterNs: 1234567}
		}
	}
	check("hostile", a, hostileTimeline{l.export})
}
