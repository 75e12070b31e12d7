package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64 // 0: error
	}{
		{"1GB", 1_000_000_000},
		{"1gb", 1_000_000_000},
		{"1.5 GiB", 3 << 29},
		{"500MiB", 500 << 20},
		{"4096", 4096},
		{"10k", 10_000},
		{"2TB", 2_000_000_000_000},
		{"", 0},
		{"GB", 0},
		{"-1GB", 0},
		{"1XB", 0},
		{"0", 0},
		{"1e30", 0},
		{"99999999999TB", 0},
	} {
		got, err := parseSize(tc.in)
		if tc.want == 0 {
			if err == nil {
				t.Errorf("parseSize(%q) = %d, want an error", tc.in, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", tc.in, got, err, tc.want)
		}
	}
}

func TestRun(t *testing.T) {
	src := "../../../shared/corpus/mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite"
	out := filepath.Join(t.TempDir(), "out.sqlite")
	for _, tc := range []struct {
		name string
		args []string
		code int
		text string // in stdout + stderr
	}{
		{"no args", nil, 2, "usage"},
		{"size and copies", []string{"-src", src, "-out", out, "-size", "1MB", "-copies", "2"}, 2, "usage"},
		{"bad size", []string{"-src", src, "-out", out, "-size", "lots"}, 2, "not a size"},
		{"unknown flag", []string{"-x"}, 2, "-x"},
		{"help", []string{"-h"}, 0, "usage"},
		{"missing source", []string{"-src", out + ".none", "-out", out, "-copies", "2"}, 1, "no such file"},
		{"copies", []string{"-q", "-src", src, "-out", out, "-copies", "2"}, 0, "2 copies"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.name == "copies" {
				if _, err := os.Stat(src); err != nil {
					t.Skipf("real nsys exports not available (CI keeps ../shared beside the repo): %v", err)
				}
			}
			var stdout, stderr bytes.Buffer
			code := run(tc.args, &stdout, &stderr)
			all := stdout.String() + stderr.String()
			if code != tc.code || !strings.Contains(all, tc.text) {
				t.Fatalf("exit %d, want %d; output %q does not contain %q", code, tc.code, all, tc.text)
			}
		})
	}
}
