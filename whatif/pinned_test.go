package whatif

import (
	"context"
	"database/sql"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
	"github.com/nsyssync/nsyssync/trace"
	_ "modernc.org/sqlite"
)

func TestPinnedCopyNs(t *testing.T) {
	for _, tc := range []struct {
		name                            string
		bytes, recorded, nsPerMiB, want int64
	}{
		{"unknown speed keeps the recorded time", 8 << 20, 1_100_000, 0, 1_100_000},
		{"no bytes", 0, 5_000, 19_000, 5_000},
		{"a staged 8 MiB copy at pinned speed", 8 << 20, 1_100_000, 19_000, PinnedCopyLatencyNs + 8*19_000},
		{"never longer than recorded", 4 << 20, 60_000, 19_000, 60_000},
		{"a copy too small to be staged keeps its time", 1 << 20, 21_500, 19_000, 21_500},
	} {
		if got := PinnedCopyNs(tc.bytes, tc.recorded, tc.nsPerMiB); got != tc.want {
			t.Errorf("%s: PinnedCopyNs = %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestPinnedSpeedOnRecordedCopies reads the copies measured on the GPU
// machine (fixtures/copyspeed: pageable and pinned copies of 4 KiB to 64
// MiB, each in an NVTX range naming its kind and size): the trace's memory
// kinds match the ranges, only pinned host-to-device copies give speed
// samples, those agree with the default speed within 15% at 16 and 64 MiB,
// and the pinned model puts a staged pageable copy of 16 MiB or more at a
// third or less of its recorded time and one too small to be staged at
// its own.
func TestPinnedSpeedOnRecordedCopies(t *testing.T) {
	ctx := context.Background()
	path := fixturegz.Gunzip(t, "../fixtures/copyspeed/copyspeed.sqlite.gz", t.TempDir())
	x, err := trace.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	tr, err := x.Load(ctx, trace.LoadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tl, err := x.Timeline(ctx, trace.Interval{Start: tr.Region.Start, End: tr.Region.End + 1})
	if err != nil {
		t.Fatal(err)
	}
	ranges := copyRanges(t, path)
	const defaultNsPerMiB = 19_000 // estimate.DefaultCalibration().PinnedHtoDNsPerMiB
	samples := map[int64][]int64{}
	checked := 0
	for _, op := range tl.Ops {
		if op.Kind != trace.OpMemcpy {
			continue
		}
		kind, size := rangeAt(ranges, op.Start)
		if kind == "" {
			continue
		}
		checked++
		wantMem := trace.MemPinned
		if strings.HasSuffix(kind, "_pageable") {
			wantMem = trace.MemPageable
		}
		if op.HostMem != wantMem || op.Bytes != size {
			t.Fatalf("%s:%d: copy of %d bytes with host memory %v", kind, size, op.Bytes, op.HostMem)
		}
		ns, ok := PinnedSpeedSample(&op)
		if ok != (kind == "htod_pinned_async" && size >= MinPinnedSampleBytes) {
			t.Errorf("%s:%d: speed sample %v", kind, size, ok)
		}
		if ok {
			samples[size] = append(samples[size], ns)
		}
		if kind == "htod_pageable" && size >= 16<<20 {
			if p := PinnedCopyNs(op.Bytes, op.End-op.Start, defaultNsPerMiB); p*3 > op.End-op.Start {
				t.Errorf("staged %d bytes recorded %d ns: pinned %d ns, want a third or less", size, op.End-op.Start, p)
			}
		}
		if kind == "htod_pageable" && size < StagedCopyMinBytes {
			if p := PinnedCopyNs(op.Bytes, op.End-op.Start, defaultNsPerMiB); p != op.End-op.Start {
				t.Errorf("small pageable copy of %d bytes: pinned %d ns, recorded %d", size, p, op.End-op.Start)
			}
		}
	}
	if checked < 8*4*15 {
		t.Fatalf("%d copies inside copy ranges, want at least 480", checked)
	}
	for _, size := range []int64{16 << 20, 64 << 20} {
		s := samples[size]
		sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
		if len(s) < 15 {
			t.Fatalf("%d pinned samples of %d bytes", len(s), size)
		}
		med := s[len(s)/2]
		if med < defaultNsPerMiB*85/100 || med > defaultNsPerMiB*115/100 {
			t.Errorf("pinned copies of %d bytes: median %d ns/MiB, default %d", size, med, defaultNsPerMiB)
		}
	}
}

type namedRange struct {
	name       string
	start, end int64
}

// copyRanges reads the export's "copy:…" NVTX ranges with plain SQL.
func copyRanges(t *testing.T, path string) []namedRange {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT coalesce(e.text, s.value), e.start, e.end FROM NVTX_EVENTS e LEFT JOIN StringIds s ON s.id = e.textId
		WHERE e.end IS NOT NULL AND coalesce(e.text, s.value) LIKE 'copy:%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []namedRange
	for rows.Next() {
		var r namedRange
		if err := rows.Scan(&r.name, &r.start, &r.end); err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// rangeAt is the kind and size of the "copy:KIND:BYTES" range holding t.
func rangeAt(ranges []namedRange, t int64) (string, int64) {
	for _, r := range ranges {
		if t < r.start || t >= r.end {
			continue
		}
		parts := strings.Split(r.name, ":")
		if len(parts) != 3 {
			continue
		}
		n, err := strconv.ParseInt(parts[2], 10, 64)
		if err == nil {
			return parts[1], n
		}
	}
	return "", 0
}
