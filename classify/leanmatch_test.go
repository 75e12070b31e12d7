package classify

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestProgramReadsAgree checks the program matcher (leanmatch.go) on small
// programs: the verdict a frameless read of n bytes gets from the places
// of the program's files, and the programs it must leave unknown.
func TestProgramReadsAgree(t *testing.T) {
	const common = "import torch\n\ndef data(n=16, d=32):\n    return torch.randn(n, d, device='cuda')\n\n" +
		"def measure(step, steps=3):\n    step(-1)\n    for i in range(steps):\n        step(i)\n"
	cases := []struct {
		name  string
		files map[string]string // file name → source; prog.py is the script
		bytes int64
		want  string // "dependency/category", or "" for no verdict
	}{
		{"logged item, printed total", map[string]string{"prog.py": "import torch\nfrom _c import data, measure\n" +
			"def main():\n    x = data()\n    total = [0.0]\n    def step(i):\n        total[0] += (x * 2).sum().item()\n" +
			"    measure(step)\n    print('total', total[0])\nmain()\n", "_c.py": common}, 4, "false/logging"},
		{"a device object is no tensor", map[string]string{"prog.py": "import torch\ndev = torch.device('cuda' if torch.cuda.is_available() else 'cpu')\n" +
			"x = torch.randn(4, device=dev)\nvals = []\nfor i in range(3):\n    y = torch.zeros(4, device=dev)\n    vals.append((x + y).sum().item())\nprint(vals)\n"}, 4, "false/logging"},
		{"item decides a branch", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\n" +
			"for i in range(3):\n    if x.sum().item() > 1.0:\n        break\n"}, 4, "true/control-flow"},
		{"item sizes a tensor", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\n" +
			"for i in range(3):\n    n = int(x.argmax().item())\n    y = torch.zeros(n + 1, device='cuda')\n"}, 8, "true/dynamic-shape"},
		{"a logged read and a branching read disagree", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\n" +
			"hist = []\nfor i in range(3):\n    hist.append(x.sum().item())\n    if x.max().item() > 3:\n        break\nprint(hist)\n"}, 4, ""},
		{"an attribute a module only prints, tested by the script", map[string]string{"prog.py": "import torch\nfrom _m import Meter\n" +
			"x = torch.randn(4, device='cuda')\nm = Meter()\nfor i in range(3):\n    m.update(x * i)\n    if m.last > 3:\n        break\nm.show()\n",
			"_m.py": "class Meter:\n    def __init__(self):\n        self.last = 0.0\n    def update(self, t):\n        self.last = t.sum().item()\n    def show(self):\n        print(self.last)\n"}, 4, "true/control-flow"},
		{"an attribute a module only prints, shown by the script", map[string]string{"prog.py": "import torch\nfrom _m import Meter\n" +
			"x = torch.randn(4, device='cuda')\nm = Meter()\nfor i in range(3):\n    m.update(x * i)\nm.show()\n",
			"_m.py": "class Meter:\n    def __init__(self):\n        self.last = 0.0\n    def update(self, t):\n        self.last = t.sum().item()\n    def show(self):\n        print(self.last)\n"}, 4, "false/logging"},
		{"a read kept on into a total and an average only shown", map[string]string{"prog.py": meterProg(""), "_m.py": meterModule}, 4, "false/logging"},
		{"a read kept on into a total the script tests", map[string]string{"prog.py": meterProg("    if m.total > 10:\n        break\n"), "_m.py": meterModule}, 4, "true/control-flow"},
		{"a read kept on into an average the script tests", map[string]string{"prog.py": meterProg("    if m.ema < 0.1:\n        break\n"), "_m.py": meterModule}, 4, "true/control-flow"},
		{"a read kept on into a local the class tests", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nclass R:\n    def __init__(self):\n        self.first = 1.0\n        self.last = 1.0\n" +
			"    def update(self, t):\n        self.last = t.sum().item()\n    def stalled(self):\n        r = self.last / self.first\n        return r > 2\n" +
			"m = R()\nfor i in range(3):\n    m.update(x * i)\n    if m.stalled():\n        break\n"}, 4, "true/control-flow"},
		// Into the methods of the program's classes (pymethods.go).
		{"a read handed to a module's method that keeps it for a report", map[string]string{"prog.py": trackerProg(""), "_t.py": trackerModule}, 4, "false/logging"},
		{"a read handed to a module's method, a kept total the script tests", map[string]string{"prog.py": trackerProg("    if t.total > 10:\n        break\n"), "_t.py": trackerModule}, 4, "true/control-flow"},
		{"a read handed to a module's method that tests it", map[string]string{"prog.py": trackerProg(""), "_t.py": strings.Replace(trackerModule,
			"        self.total += v * n\n", "        self.total += v * n\n        if v > 100:\n            raise ValueError(v)\n", 1)}, 4, "true/control-flow"},
		{"a read handed to a method of an object imported from a library", map[string]string{"prog.py": "import torch\nfrom _t import Tracker\nimport mylib\n" +
			"x = torch.randn(4, device='cuda')\nt = mylib.Tracker()\nfor i in range(3):\n    t.push((x * i).sum().item(), n=2)\n", "_t.py": trackerModule}, 4, ""},
		{"a read returned by a property the script only prints", map[string]string{"prog.py": propProg("print(m.mean, m.ratio())\n"), "_m.py": propModule}, 4, "false/logging"},
		{"a read returned by a property the script tests", map[string]string{"prog.py": propProg("    if m.mean > 3:\n        break\n"), "_m.py": propModule}, 4, "true/control-flow"},
		{"a read returned by a method the script tests", map[string]string{"prog.py": propProg("    if m.ratio() > 2:\n        break\n"), "_m.py": propModule}, 4, "true/control-flow"},
		{"a read returned by a method the script keeps", map[string]string{"prog.py": propProg("    r = m.ratio()\n    if r > 2:\n        break\n"), "_m.py": propModule}, 4, "true/control-flow"},
		{"a read kept on through max() into a peak only shown", map[string]string{"prog.py": peakProg(""), "_m.py": peakModule}, 4, "false/logging"},
		{"a read kept on through max() into a peak the script tests", map[string]string{"prog.py": peakProg("    if m.peak > 5:\n        break\n"), "_m.py": peakModule}, 4, "true/control-flow"},
		{"a truth test of a tensor is a branch too", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\n" +
			"vals = []\nfor i in range(3):\n    vals.append(x.sum().item())\n    done = x.max()\n    if done:\n        break\nprint(vals)\n"}, 4, ""},
		{"a tensor handed to math is not followed", map[string]string{"prog.py": "import math, torch\nx = torch.randn(4, device='cuda')\n" +
			"vals = []\nfor i in range(3):\n    vals.append(x.sum().item())\n    r = math.sqrt(x.max())\nprint(vals)\n"}, 4, ""},
		{"an index that may be a tensor is not followed", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\n" +
			"names = ['a', 'b', 'c', 'd']\nvals = []\nfor i in range(3):\n    vals.append(x.sum().item())\n    print(names[x.argmax()])\nprint(vals)\n"}, 8, ""},
		{"a library's code is not read", map[string]string{"prog.py": "import torch, tqdm\nx = torch.randn(4, device='cuda')\n" +
			"vals = []\nfor i in tqdm.trange(3):\n    vals.append(x.sum().item())\nprint(vals)\n"}, 4, ""},
		{"a local module that is missing is not read", map[string]string{"prog.py": "import torch\nfrom helpers import show\n" +
			"x = torch.randn(4, device='cuda')\nvals = []\nfor i in range(3):\n    vals.append(x.sum().item())\nshow(vals)\n"}, 4, ""},
		{"a program that starts other programs", map[string]string{"prog.py": "import torch, os\nx = torch.randn(4, device='cuda')\n" +
			"vals = []\nfor i in range(3):\n    vals.append(x.sum().item())\nos.system('python3 other.py')\nprint(vals)\n"}, 4, ""},
		{"a program that starts other programs through subprocess", map[string]string{"prog.py": "import torch, subprocess\nx = torch.randn(4, device='cuda')\n" +
			"vals = []\nfor i in range(3):\n    vals.append(x.sum().item())\nsubprocess.run(['python3', 'other.py'])\nprint(vals)\n"}, 4, ""},
		{"LBFGS reads inside its step", map[string]string{"prog.py": "import torch\nw = torch.randn(4, device='cuda', requires_grad=True)\n" +
			"opt = torch.optim.LBFGS([w])\nvals = []\ndef closure():\n    opt.zero_grad()\n    loss = (w ** 2).sum()\n    loss.backward()\n    return loss\n" +
			"for i in range(3):\n    vals.append(opt.step(closure).item())\nprint(vals)\n"}, 4, ""},
		{"linalg checks its results", map[string]string{"prog.py": "import torch\na = torch.randn(4, 4, device='cuda')\n" +
			"vals = []\nfor i in range(3):\n    x = torch.linalg.solve(a, a)\n    vals.append(x.sum().item())\nprint(vals)\n"}, 4, ""},
		{"a program with neither torch nor CuPy", map[string]string{"prog.py": "import numpy\nx = numpy.ones(4)\nprint(float(x.sum()))\n"}, 4, ""},
		{"CuPy: a value printed", map[string]string{"prog.py": "import cupy\nx = cupy.ones(4)\nprint(float(x.sum()))\n"}, 4, "false/logging"},
		{"CuPy: a residual tested", map[string]string{"prog.py": "import cupy as cp\nx = cp.ones(4, dtype=cp.float32)\n" +
			"for i in range(9):\n    x = x * 0.5\n    if float(cp.linalg.norm(x)) < 1e-3:\n        break\n"}, 4, "true/control-flow"},
		{"CuPy: copies kept (.get())", map[string]string{"prog.py": "import cupy as cp\nx = cp.ones(64, dtype=cp.float32)\n" +
			"kept = []\nfor i in range(3):\n    kept.append((x * i).get())\nprint(len(kept))\n"}, 256, "false/device-to-host-copy"},
		{"CuPy: copies kept (asnumpy)", map[string]string{"prog.py": "import cupy as cp\nx = cp.ones(64, dtype=cp.float32)\n" +
			"kept = []\nfor i in range(3):\n    kept.append(cp.asnumpy(x * i))\nprint(len(kept))\n"}, 256, "false/device-to-host-copy"},
		{"CuPy: dict.get is no read", map[string]string{"prog.py": "import cupy as cp\ncfg = {'n': 4}\nx = cp.ones(cfg.get('n'), dtype=cp.float32)\n" +
			"kept = []\nfor i in range(3):\n    kept.append((x * i).get())\nprint(len(kept))\n"}, 16, "false/device-to-host-copy"},
		{"CuPy: a copy and a tested value disagree", map[string]string{"prog.py": "import cupy as cp\nx = cp.ones(4, dtype=cp.float32)\n" +
			"kept = []\nfor i in range(3):\n    kept.append((x * i).get())\n    if float(x.sum()) > 3:\n        break\n"}, 4, ""},
		{"CuPy: a gather with randint's indices reads nothing", map[string]string{"prog.py": "import cupy as cp\nx = cp.ones(64, dtype=cp.float32)\n" +
			"idx = cp.random.randint(0, 64, size=16)\nvals = []\nfor i in range(3):\n    y = x[idx] * i\n    vals.append(float(y.sum()))\nprint(vals)\n"}, 4, "false/logging"},
		{"CuPy: randint without a size may be a 0-d index", map[string]string{"prog.py": "import cupy as cp\nx = cp.ones(64, dtype=cp.float32)\n" +
			"vals = []\nfor i in range(3):\n    j = cp.random.randint(0, 64)\n    vals.append(float(x[j]))\nprint(vals)\n"}, 4, ""},
		{"torch: a gather with randperm's indices reads nothing", map[string]string{"prog.py": "import torch\nx = torch.randn(64, device='cuda')\n" +
			"vals = []\nfor i in range(3):\n    perm = torch.randperm(64, device='cuda')\n    vals.append(x[perm].sum().item())\nprint(vals)\n"}, 4, "false/logging"},
		{"CuPy: a count sizes a random array", map[string]string{"prog.py": "import cupy as cp\nx = cp.random.standard_normal(64)\n" +
			"for i in range(3):\n    n = int(cp.count_nonzero(x > 0))\n    x = cp.random.standard_normal((max(n, 1), 4)).ravel()\n"}, 8, "true/dynamic-shape"},
		{"a module's class the script never names reads nothing", map[string]string{
			"_u.py": "class Used:\n    def __init__(self):\n        self.seen = []\n    def add(self, t):\n        self.seen.append(t.sum().item())\n" +
				"class Unused:\n    def check(self, t):\n        if t.sum().item() > 3:\n            raise ValueError('diverged')\n",
			"prog.py": "import torch\nfrom _u import Used\nx = torch.randn(4, device='cuda')\nu = Used()\nfor i in range(3):\n    u.add(x * i)\nprint(u.seen)\n"},
			4, "false/logging"},
		{"a copy only kept", map[string]string{"prog.py": "import torch\nx = torch.randn(64, device='cuda')\n" +
			"kept = []\nfor i in range(3):\n    kept.append((x * i).cpu())\nprint(len(kept))\n"}, 256, "false/device-to-host-copy"},
		{"a copy to a device not known", map[string]string{"prog.py": "import torch, sys\ndev = sys.argv[1]\n" +
			"x = torch.randn(64, device='cuda')\nkept = []\nfor i in range(3):\n    kept.append((x * i).cpu())\n    y = x.to(dev)\nprint(len(kept))\n"}, 256, ""},
		{"a copy into a CPU tensor is not followed", map[string]string{"prog.py": "import torch\nx = torch.randn(64, device='cuda')\n" +
			"bank = torch.empty(64)\nkept = []\nfor i in range(3):\n    kept.append((x * i).cpu())\n    bank.copy_(x)\nprint(len(kept))\n"}, 256, ""},
		{"a read kept through min() into an attribute the loop tests", map[string]string{"prog.py": "import torch\nclass Stop:\n" +
			"    def __init__(self):\n        self.best = float('inf')\n    def step(self, v):\n        self.best = min(self.best, v.item())\n" +
			"        return self.best < 0.1\nx = torch.randn(4, device='cuda')\ns = Stop()\nfor i in range(3):\n    if s.step(x.sum()):\n        break\n" +
			"print(f'best {s.best:.3f}')\n"}, 4, "true/control-flow"},
		{"no place fits a large read", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\n" +
			"vals = []\nfor i in range(3):\n    vals.append(x.sum().item())\nprint(vals)\n"}, 4096, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkAgreeing(t, c.files, c.bytes, c.want) })
	}
}

// checkAgreeing writes a program's files (prog.py is the script) and
// checks the verdict its places agree on for a read of n bytes ("" for
// none).
func checkAgreeing(t *testing.T, files map[string]string, n int64, want string) {
	t.Helper()
	dir := t.TempDir()
	for name, src := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(src), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	l := newLeanReads(newSourceReader(Options{SourceRoot: dir}, ""), []string{"python3", "/elsewhere/proj/prog.py"})
	defer l.close()
	fit, why := l.agreeing(n)
	got := ""
	if why == "" {
		got = string(fit[0].dep) + "/" + fit[0].cat
	}
	if got != want {
		t.Errorf("verdict %q, want %q (why %q); places:", got, want, why)
		for _, p := range l.places {
			t.Errorf("  %s/%s %s", p.dep, p.cat, p.what)
		}
	}
}

// meterModule is a helper module whose class keeps a read in an attribute
// and goes on with it into a total and an average that show() prints.
const meterModule = "class Meter:\n    def __init__(self):\n        self.last = 0.0\n        self.total = 0.0\n        self.count = 0\n        self.ema = 0.0\n" +
	"    def update(self, t):\n        self.last = t.sum().item()\n        self.total += self.last\n        self.count += 1\n" +
	"        self.ema = 0.9 * self.ema + 0.1 * self.last\n" +
	"    def show(self):\n        mean = self.total / max(self.count, 1)\n        print(f'mean {mean:.3f} ema {self.ema:.3f}')\n"

// meterProg is a script that updates a Meter each step (tail: more of the
// loop's body) and shows it after the loop.
func meterProg(tail string) string {
	return "import torch\nfrom _m import Meter\nx = torch.randn(4, device='cuda')\nm = Meter()\nfor i in range(3):\n    m.update(x * i)\n" + tail + "m.show()\n"
}

// trackerModule's class keeps what a method is handed in attributes and
// prints them in report().
const trackerModule = "class Tracker:\n    def __init__(self):\n        self.total = 0.0\n        self.n = 0\n" +
	"    def push(self, v, n=1):\n        self.total += v * n\n        self.n += n\n" +
	"    def report(self):\n        print(f'mean {self.total / max(self.n, 1):.3f}')\n"

// trackerProg is a script that hands a read to a Tracker each step (tail:
// more of the loop's body) and reports after the loop.
func trackerProg(tail string) string {
	return "import torch\nfrom _t import Tracker\nx = torch.randn(4, device='cuda')\nt = Tracker()\nfor i in range(3):\n    t.push((x * i).sum().item(), n=2)\n" + tail + "t.report()\n"
}

// propModule's class keeps a read in attributes and hands them out through
// a property and a method that compute with them.
const propModule = "class Stats:\n    def __init__(self):\n        self.first = None\n        self.last = 0.0\n        self.total = 0.0\n        self.n = 0\n" +
	"    def add(self, t):\n        self.last = t.sum().item()\n        self.total += self.last\n        self.n += 1\n        if self.first is None:\n            self.first = 1.0\n" +
	"    @property\n    def mean(self):\n        return self.total / max(self.n, 1)\n" +
	"    def ratio(self):\n        return self.last / self.first\n"

// propProg is a script that adds to a Stats each step (tail: the loop's
// body after it, or, unindented, what follows the loop).
func propProg(tail string) string {
	return "import torch\nfrom _m import Stats\nx = torch.randn(4, device='cuda')\nm = Stats()\nfor i in range(3):\n    m.add(x * i)\n" + tail
}

// peakModule's class keeps a read and its largest so far.
const peakModule = "class Peak:\n    def __init__(self):\n        self.last = 0.0\n        self.peak = 0.0\n" +
	"    def add(self, t):\n        self.last = t.sum().item()\n        self.peak = max(self.peak, abs(self.last))\n" +
	"    def show(self):\n        print(round(self.last, 3), self.peak)\n"

// peakProg is a script that adds to a Peak each step (tail: more of the
// loop's body) and shows it after the loop.
func peakProg(tail string) string {
	return "import torch\nfrom _m import Peak\nx = torch.randn(4, device='cuda')\nm = Peak()\nfor i in range(3):\n    m.add(x * i)\n" + tail + "m.show()\n"
}

// TestScriptPath checks which argument of a captured command line is the
// program's script.
func TestScriptPath(t *testing.T) {
	for _, c := range []struct {
		cmd  []string
		want string
	}{
		{[]string{"python3", "/w/train.py", "--lr", "0.1"}, "/w/train.py"},
		{[]string{"python3", "-u", "train.py"}, "train.py"},
		{[]string{"python3", "-m", "pkg.train"}, ""},
		{[]string{"python3", "-c", "import x"}, ""},
		{[]string{"./a.out"}, ""},
		{nil, ""},
	} {
		if got := scriptPath(c.cmd); got != c.want {
			t.Errorf("scriptPath(%q) = %q, want %q", c.cmd, got, c.want)
		}
	}
}
