package triage

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

func TestExpand(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"a.sqlite", "b.sqlite", "b.nsys-rep", "c.nsys-rep", "notes.txt", "sub/d.sqlite",
		"a.sqlite.gz", "e.sqlite.gz", "e.nsys-rep"} {
		p := filepath.Join(dir, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := filepath.Join(dir, "empty")
	os.Mkdir(empty, 0o755)
	j := func(names ...string) []string {
		var out []string
		for _, n := range names {
			out = append(out, filepath.Join(dir, n))
		}
		return out
	}
	tests := []struct {
		name     string
		args     []string
		want     []string
		problems int
	}{
		{"directory walked, rep or gzipped copy beside its export skipped", []string{dir}, j("a.sqlite", "b.sqlite", "c.nsys-rep", "e.sqlite.gz", "sub/d.sqlite"), 0},
		{"glob", []string{filepath.Join(dir, "*.sqlite")}, j("a.sqlite", "b.sqlite"), 0},
		{"file kept as given, also a .nsys-rep beside an export", []string{filepath.Join(dir, "b.nsys-rep")}, j("b.nsys-rep"), 0},
		{"duplicates once", []string{filepath.Join(dir, "a.sqlite"), dir}, j("a.sqlite", "b.sqlite", "c.nsys-rep", "e.sqlite.gz", "sub/d.sqlite"), 0},
		{"a gzipped export given", []string{filepath.Join(dir, "a.sqlite.gz")}, j("a.sqlite.gz"), 0},
		{"missing file kept for the batch to report", []string{filepath.Join(dir, "gone.sqlite")}, j("gone.sqlite"), 0},
		{"glob without match", []string{filepath.Join(dir, "*.none")}, nil, 1},
		{"directory without exports", []string{empty}, nil, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			problems := 0
			for _, in := range Expand(tt.args) {
				if in.Problem != nil {
					problems++
					continue
				}
				got = append(got, in.Path)
			}
			if !slices.Equal(got, tt.want) || problems != tt.problems {
				t.Errorf("Expand(%v) = %v with %d problems, want %v with %d", tt.args, got, problems, tt.want, tt.problems)
			}
		})
	}
}

func TestParseShard(t *testing.T) {
	tests := []struct {
		spec    string
		want    Shard
		wantErr bool
	}{
		{"0/4", Shard{0, 4}, false},
		{"3/4", Shard{3, 4}, false},
		{"0/1", Shard{0, 1}, false},
		{"4/4", Shard{}, true},
		{"-1/4", Shard{}, true},
		{"1/0", Shard{}, true},
		{"1", Shard{}, true},
		{"a/b", Shard{}, true},
	}
	for _, tt := range tests {
		got, err := ParseShard(tt.spec)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseShard(%q) = %v, %v; want %v, error %v", tt.spec, got, err, tt.want, tt.wantErr)
		}
	}
}

// Every input lands in exactly one shard, decided by the base name alone,
// and the shards are not lopsided.
func TestShardPartition(t *testing.T) {
	const n = 4
	var inputs []Input
	for i := range 400 {
		inputs = append(inputs, Input{Path: fmt.Sprintf("/night/a/trace_%03d.sqlite", i)})
	}
	inputs = append(inputs, Input{Path: "/nope/*.sqlite", Problem: fmt.Errorf("no file matches")})
	seen := map[string]int{}
	for i := range n {
		share := Shard{i, n}.Select(inputs)
		if len(share) < 60 {
			t.Errorf("shard %d/%d took %d of 400", i, n, len(share))
		}
		for _, in := range share {
			seen[in.Path]++
			moved := Shard{i, n}.Keeps(filepath.Join("/other/machine", filepath.Base(in.Path)))
			if in.Problem == nil && !moved {
				t.Errorf("%s: shard depends on the directory", in.Path)
			}
		}
	}
	for _, in := range inputs {
		if seen[in.Path] != 1 {
			t.Errorf("%s in %d shards, want 1", in.Path, seen[in.Path])
		}
	}
	if got := (Shard{}).Select(inputs); len(got) != len(inputs) {
		t.Errorf("zero shard kept %d of %d", len(got), len(inputs))
	}
}
