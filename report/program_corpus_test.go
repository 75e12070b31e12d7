package report

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/program"
	"github.com/nsyssync/nsyssync/trace"
)

// torchWords are PyTorch's vocabulary: no report or doctor output of a
// program without PyTorch may hold one (compared lower-case).
var torchWords = []string{"torch", "non_blocking", ".item()", "wait_stream", "pin_memory", "nvtx.range", "emit_nvtx",
	"autograd", "aten::", "thpvariable", ".tolist()", "masked_select", "dataloader"}

// loadCorpus opens and analyses every corpus export that holds a CUDA
// trace.
func loadCorpus(t *testing.T) []loaded {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	if len(files) == 0 {
		t.Skipf("no shared corpus at %s", corpusDir)
	}
	ctx := context.Background()
	var out []loaded
	for _, f := range files {
		x, err := trace.Open(ctx, f)
		if errors.Is(err, trace.ErrNoCUDATrace) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		t.Cleanup(func() { x.Close() })
		tr, err := x.Load(ctx, trace.LoadOptions{})
		if errors.Is(err, trace.ErrNoCUDATrace) {
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, loaded{export: x, analysis: NewWith(tr, classify.Options{}), timelines: x})
	}
	if len(out) < 20 {
		t.Fatalf("analysed %d corpus exports, want the whole corpus", len(out))
	}
	return out
}

// renderAll is every output of an export: the report in each format and
// the doctor's, text and JSON.
func renderAll(t *testing.T, l loaded) map[string]string {
	t.Helper()
	ctx := context.Background()
	a := l.analysis
	out := map[string]string{}
	for name, write := range map[string]func(*bytes.Buffer) error{
		"text":        func(b *bytes.Buffer) error { return a.WriteText(b, TextOptions{}) },
		"markdown":    func(b *bytes.Buffer) error { return a.WriteMarkdown(b, MarkdownOptions{Details: 100}) },
		"html":        func(b *bytes.Buffer) error { return a.WriteHTML(ctx, b, HTMLOptions{Timelines: l.timelines}) },
		"json":        func(b *bytes.Buffer) error { return a.WriteJSON(b) },
		"doctor":      func(b *bytes.Buffer) error { return Diagnose(a).WriteText(b, TextOptions{}) },
		"doctor json": func(b *bytes.Buffer) error { return Diagnose(a).WriteJSON(b) },
	} {
		var b bytes.Buffer
		if err := write(&b); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		out[name] = b.String()
	}
	return out
}

// TestNoPyTorchWordsOutsidePyTorch renders every output of every corpus
// export whose program is not PyTorch and looks for PyTorch's words. A
// Python program may be told to add --python-backtrace=cuda (nsys gives
// any Python program file:line with it); a native one may not.
func TestNoPyTorchWordsOutsidePyTorch(t *testing.T) {
	checked := map[program.Framework]int{}
	for _, l := range loadCorpus(t) {
		p := l.analysis.Program
		name := filepath.Base(l.analysis.Trace.Path)
		if p.Framework == program.PyTorch {
			continue
		}
		checked[p.Framework]++
		words := torchWords
		if !p.IsPython() {
			words = append(words, "--python-backtrace", "python3 your_program.py")
		}
		for format, text := range renderAll(t, l) {
			low := strings.ToLower(text)
			for _, w := range words {
				if i := strings.Index(low, w); i >= 0 {
					t.Errorf("%s (%s), %s: says %q: …%s…", name, p.Framework, format, w, text[max(0, i-80):min(len(text), i+80)])
				}
			}
		}
	}
	for _, fw := range []program.Framework{program.CUDA, program.CuPy, program.OpenACC, program.OpenMP, program.MPI, program.JAX, program.RAPIDS, program.TensorRT} {
		if checked[fw] == 0 {
			t.Errorf("no corpus export of %s checked", fw)
		}
	}
}

// TestEverySiteHasAFix: every site of every corpus export says what to
// do or what to look at (issue 16, item 5).
func TestEverySiteHasAFix(t *testing.T) {
	sites := 0
	for _, l := range loadCorpus(t) {
		for _, s := range l.analysis.Sites {
			sites++
			if strings.TrimSpace(s.Fix) == "" {
				t.Errorf("%s: site %s (%v ×%d, %s/%s) has no fix", filepath.Base(l.analysis.Trace.Path), s.ID, s.APIs, len(s.Syncs), s.Dependency, s.Category)
			}
		}
	}
	if sites < 100 {
		t.Errorf("checked %d sites, want the corpus' (over 100)", sites)
	}
}

// TestDoctorAsksForTheModelsTrace: the doctor asks for -t openacc,
// -t openmp and -t mpi where the program uses them and the export lacks
// their tables, and for the Python payload only for Python programs.
func TestDoctorAsksForTheModelsTrace(t *testing.T) {
	want := map[string]string{
		"openacc-jacobi_4xv100_reexport2025.3.sqlite":                "-t cuda,nvtx,openacc ",
		"openacc-nvhpc_rtx3080_nsys2020.5.sqlite":                    "-t cuda,nvtx,openacc ",
		"openmp-offload-heat_t4_nsys2023.3.sqlite":                   "-t cuda,nvtx,openmp ",
		"mpi-cuda-saxpy_perlmutter-a100_nsys2022.2.sqlite":           "-t cuda,nvtx,mpi ",
		"cuda-rodinia-gaussian-threadsync_rtx3090_nsys2022.4.sqlite": "-t cuda,nvtx --cudabacktrace=all:1000 -s cpu --cpuctxsw=none -o cuda-rodinia-gaussian-threadsync_rtx3090_nsys2022.4 ./your_program",
		"cupy-gtls_rtx3060_nsys2023.1.sqlite":                        "--python-backtrace=cuda -o cupy-gtls_rtx3060_nsys2023.1 python3 your_program.py",
		"pytorch-cnn-dlprof_rtx2070s_nsys2022.1.sqlite":              "--python-backtrace=cuda --pytorch=autograd-nvtx",
	}
	found := 0
	for _, l := range loadCorpus(t) {
		name := filepath.Base(l.analysis.Trace.Path)
		w, ok := want[name]
		if !ok {
			continue
		}
		found++
		d := Diagnose(l.analysis)
		if !strings.Contains(d.Profile, w) {
			t.Errorf("%s: profile command %q lacks %q", name, d.Profile, w)
		}
	}
	if found != len(want) {
		t.Errorf("checked %d exports, want %d", found, len(want))
	}
}
