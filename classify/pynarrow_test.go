package classify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// TestTypeNarrowing asks the GPU-type question of the last use of a name on
// each line marked `# NAME: gpu` or `# NAME: host` (pynarrow.go): what the
// statements before it in its function show, where the other bindings of
// the name may hold a CUDA tensor.
func TestTypeNarrowing(t *testing.T) {
	const head = "import torch\nx = torch.ones(1, device='cuda')\n"
	const call = "f(x)\nf(2.0)\n"
	cases := []struct{ name, src string }{
		{"a parameter handed a tensor is one", "def f(v):\n    print(v)  # v: gpu\n"},
		{"converted when it is a tensor", "def f(v):\n    if isinstance(v, torch.Tensor):\n        v = v.item()\n    print(v)  # v: host\n"},
		{"torch.is_tensor's other branch", "def f(v):\n    w = v.item() if torch.is_tensor(v) else float(v)  # v: host\n    return w\n"},
		{"the branch of a tensor test converts nothing", "def f(v):\n    if torch.is_tensor(v):\n        print(v)  # v: gpu\n"},
		{"a Python scalar type's branch", "def f(v):\n    if isinstance(v, (int, float)):\n        print(v)  # v: host\n"},
		{"a scalar type's other branch may be a tensor", "def f(v):\n    if isinstance(v, (int, float)):\n        pass\n    else:\n        print(v)  # v: gpu\n"},
		{"a guard that raises", "def f(v):\n    if not isinstance(v, (int, float)):\n        raise TypeError(v)\n    print(v)  # v: host\n"},
		{"a guard that does not leave", "def f(v):\n    if not isinstance(v, (int, float)):\n        print('odd')\n    print(v)  # v: gpu\n"},
		{"an assert", "def f(v):\n    assert isinstance(v, float)\n    print(v)  # v: host\n"},
		{"a plain assignment before", "def f(v):\n    v = v.item()\n    print(v)  # v: host\n"},
		{"bound again after", "def f(v):\n    v = v.item()\n    v = v * torch.ones(2, device='cuda')\n    print(v)  # v: gpu\n"},
		{"a loop binds it again after the read", "def f(v):\n    v = float(v)\n    for i in range(3):\n        print(v)  # v: gpu\n        v = torch.ones(1, device='cuda')\n"},
		{"converted inside the loop before the read", "def f(vals):\n    for v in vals:\n        if isinstance(v, torch.Tensor):\n            v = v.item()\n        print(v)  # v: host\n\nf([x])\n"},
		{"both branches convert", "def f(v):\n    if isinstance(v, torch.Tensor):\n        v = v.item()\n    else:\n        v = float(v)\n    print(v)  # v: host\n"},
		{"one branch binds a tensor", "def f(v):\n    if isinstance(v, torch.Tensor):\n        v = v.item()\n    else:\n        v = torch.ones(1, device='cuda')\n    print(v)  # v: gpu\n"},
		{"an elif converts None", "def f(v):\n    if isinstance(v, torch.Tensor):\n        v = v.item()\n    elif v is None:\n        v = 0.0\n    print(v)  # v: host\n"},
		{"None's branch", "def f(v):\n    if v is None:\n        print(v)  # v: host\n    if v is not None:\n        print(v)  # v: gpu\n"},
		{"and's right side", "def f(v):\n    ok = isinstance(v, float) and v > 0  # v: host\n    bad = v > 0 and isinstance(v, float)  # v: gpu\n"},
		{"the comparison before it proves nothing", "def f(v, k):\n    while k < 3 and v.sqrt().item() > 0:  # v: gpu\n        k += 1\n"},
		{"isinstance shadowed", "def isinstance(a, b):\n    return True\ndef f(v):\n    if isinstance(v, float):\n        print(v)  # v: gpu\n"},
		{"CuPy arrays are no torch.Tensor", "import cupy\ndef f(v):\n    if not isinstance(v, torch.Tensor):\n        print(v)  # v: gpu\n"},
		{"torch's questions are Python values", "def f(v):\n    b = torch.is_tensor(v) and torch.is_floating_point(v)\n    print(b)  # b: host\n"},
		{"a parameter bound to a tensor in its function", "def h(v):\n    print(v)\n    v = torch.zeros(2, device='cuda')\n    print(v)  # v: gpu\n\nh(1.0)\n"},
		{"a tensor test's other branch without CuPy", "def f(v):\n    if not isinstance(v, torch.Tensor):\n        print(v)  # v: host\n"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			src := head + c.src + call
			checkTypeMarks(t, src)
		})
	}
}

// checkTypeMarks parses src as a program's script and checks each marked
// line's answer.
func checkTypeMarks(t *testing.T, src string) {
	t.Helper()
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "prog.py"), []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	l := newLeanReads(newSourceReader(Options{SourceRoot: dir}, ""), []string{"python3", "/elsewhere/proj/prog.py"})
	defer l.close()
	l.readProgram()
	if l.prog == nil {
		t.Fatalf("program not read: %s", l.why)
	}
	g, pf := newGPUTyper(l.prog), l.prog.files[0]
	marks := 0
	for i, line := range strings.Split(src, "\n") {
		_, mark, ok := strings.Cut(line, "# ")
		name, want, ok2 := strings.Cut(mark, ": ")
		if !ok || !ok2 {
			continue
		}
		marks++
		var last *sitter.Node
		walkAll(pf.root, func(n *sitter.Node) {
			if n.Kind() == "identifier" && int(n.StartPosition().Row) == i && pf.text(n) == name {
				last = n
			}
		})
		if last == nil {
			t.Fatalf("line %d: no %s", i+1, name)
		}
		got := map[bool]string{true: "gpu", false: "host"}[g.maybeGPU(pf, last)]
		if got != want {
			t.Errorf("line %d %q: %s is %s, want %s", i+1, strings.TrimSpace(line), name, got, want)
		}
	}
	if marks == 0 {
		t.Fatal("no marked line")
	}
}
