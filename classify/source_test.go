package classify

import (
	"os"
	"path/filepath"
	"testing"
)

func TestResolve(t *testing.T) {
	root := t.TempDir()
	prog := filepath.Join(root, "proj", "train.py")
	if err := os.MkdirAll(filepath.Dir(prog), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(prog, []byte("x = 1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ file, want string }{
		{"/home/someone/work/proj/train.py", prog}, // suffix proj/train.py
		{"/proj/train.py", prog},
		{`C:\Users\me\proj\train.py`, prog},
		{"/elsewhere/other.py", ""},
		{"/home/x/../../etc/passwd", ""}, // never climbs out of root
		{"/home/someone/work/proj", ""},  // a directory is no source file
		{"", ""},
	} {
		if got := Resolve(root, tc.file); got != tc.want {
			t.Errorf("Resolve(%q) = %q, want %q", tc.file, got, tc.want)
		}
	}
	// The real fixtures' frames name the GPU machine's checkout.
	if got := Resolve("..", "/work/main/fixtures/programs/patterns.py"); got != filepath.Join("..", "fixtures", "programs", "patterns.py") {
		t.Errorf("Resolve(.., patterns.py) = %q", got)
	}
}

func TestStatement(t *testing.T) {
	dir := t.TempDir()
	src := `def f(x, loss):
    if (
        loss.item()  # the read
        > 3
    ):
        return 1
    total = foo(a,
                loss.item())
    s = "has # no comment"
    return x
`
	p := filepath.Join(dir, "prog.py")
	if err := os.WriteFile(p, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	r := newSourceReader(Options{SourceRoot: dir}, "")
	for _, tc := range []struct {
		line int64
		want string
	}{
		{3, "if ( loss.item() > 3 ):"},
		{2, "if ( loss.item() > 3 ):"},
		{8, "total = foo(a, loss.item())"},
		{9, `s = "has # no comment"`},
		{10, "return x"},
	} {
		st, ok := r.statement("/remote/prog.py", tc.line)
		if !ok || st.text != tc.want {
			t.Errorf("line %d: %q (ok %v), want %q", tc.line, st.text, ok, tc.want)
		}
	}
	if _, ok := r.statement("/remote/prog.py", 99); ok {
		t.Error("a line past the end gave a statement")
	}
	if _, ok := r.statement("/remote/missing.py", 1); ok {
		t.Error("a missing file gave a statement")
	}
}

func TestClassifyStatement(t *testing.T) {
	for _, tc := range []struct {
		text, marker string
		use          Use
		name         string
	}{
		{"if loss.item() > THRESHOLD:", ".item()", UseBranch, ""},
		{"if (x > 0.5).any():", "", UseBranch, ""},
		{"while err.item() > tol:", ".item()", UseBranch, ""},
		{"assert bool(ok)", "", UseBranch, ""},
		{"y = a if t.item() > 0 else b", ".item()", UseBranch, ""},
		{"if step % 100 == 0: print(loss.item())", ".item()", UseLog, ""},
		{"losses.append(loss.item())", ".item()", UseLog, ""},
		{`print("loss", loss.item())`, ".item()", UseLog, ""},
		{`logger.info("loss %f", loss.item())`, ".item()", UseLog, ""},
		{"total_loss += loss.item()", ".item()", UseLog, ""},
		{`return f"{loss.item():.3f}"`, ".item()", UseLog, ""},
		{"return graph_out.item()", ".item()", UseNone, "return"},
		{"v = loss.item()", ".item()", UseNone, "v"},
		{"n: int = t.item()", ".item()", UseNone, "n"},
		{"foo(t.item())", ".item()", UseNone, ""},
		{"if ready: x = t.item()", ".item()", UseNone, "x"},
	} {
		use, name := classifyStatement(tc.text, tc.marker)
		if use != tc.use || name != tc.name {
			t.Errorf("classifyStatement(%q) = %v, %q; want %v, %q", tc.text, use, name, tc.use, tc.name)
		}
	}
}

func TestFirstUse(t *testing.T) {
	lines := []string{
		"def f(t):",
		"    v = t.item()",
		"    w = 2",
		"    if v > 3:",
		"        pass",
		"def g(t):",
		"    v = t.item()",
		"    v = 0",
		"    print(v)",
	}
	st := &statement{file: "p.py", line: 2, first: 1, last: 1, indent: 4, lines: lines}
	if use, ev, ok := firstUse(st, "v"); !ok || use != UseBranch || ev == "" {
		t.Errorf("first use of v in f: %v %q %v, want a branch", use, ev, ok)
	}
	st = &statement{file: "p.py", line: 7, first: 6, last: 6, indent: 4, lines: lines}
	if _, _, ok := firstUse(st, "v"); ok {
		t.Error("v is overwritten before it is read: no use should be found")
	}
}

func TestShortSymbol(t *testing.T) {
	for in, want := range map[string]string{
		"void at::native::nonzero_cuda_out_impl<bool>(at::Tensor const&, at::Tensor&)":                                 "at::native::nonzero_cuda_out_impl<bool>",
		"at::native::_local_scalar_dense_cuda(at::Tensor const&)::{lambda()#1}::operator()() const":                    "at::native::_local_scalar_dense_cuda",
		"torch::utils::(anonymous namespace)::internal_new_from_data(c10::TensorOptions, c10::ScalarType)":             "torch::utils::(anonymous namespace)::internal_new_from_data",
		"std::tuple<at::Tensor, at::Tensor> at::native::internal::unique_cuda_template<long>(at::Tensor const&, bool)": "at::native::internal::unique_cuda_template<long>",
		"THCPModule_cudaSynchronize(_object*, _object*)":                                                               "THCPModule_cudaSynchronize",
		"cudaStreamSynchronize": "cudaStreamSynchronize",
	} {
		if got := shortSymbol(in); got != want {
			t.Errorf("shortSymbol(%q) = %q, want %q", in, got, want)
		}
	}
}
