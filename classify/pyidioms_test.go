package classify

import "testing"

// meterStr is a meter in the style of many training scripts: __str__
// formats its state with % over a tuple; sync() would send the total to
// the GPU (for distributed runs) and is called only where a case says so.
const meterStr = "import torch\nclass Meter:\n    def __init__(self):\n        self.val = 0.0\n        self.total = 0.0\n        self.n = 0\n" +
	"    def update(self, v, n=1):\n        self.val = v\n        self.total += v * n\n        self.n += n\n" +
	"    def sync(self):\n        t = torch.tensor([self.total, self.n], device='cuda')\n        self.total, self.n = t.tolist()\n" +
	"    def __str__(self):\n        return '%.3f (%.3f)' % (self.val, self.total / max(self.n, 1))\n\n"

// spikeWatch keeps the last value, a running average that starts unset
// (None) and their ratio, and says through a property whether the ratio
// is high: four attributes from the value to the test.
const spikeWatch = "class SpikeWatch:\n    def __init__(self):\n        self.last = None\n        self.avg = None\n        self.ratio = 1.0\n" +
	"    def push(self, v):\n        self.last = float(v)  # <-\n        if self.avg is None:\n            self.avg = self.last\n" +
	"        self.ratio = self.last / max(self.avg, 1e-9)\n        self.avg = 0.9 * self.avg + 0.1 * self.last\n" +
	"    @property\n    def high(self):\n        return self.ratio > 4.0\n\n"

// bestKeeper keeps the lowest value it is handed; measure runs a step
// function three times.
const bestKeeper = "class Best:\n    def __init__(self):\n        self.best = 1e9\n" +
	"    def update(self, v):\n        if v < self.best:\n            self.best = v\n" +
	"def measure(step):\n    for i in range(3):\n        step(i)\n"

// plateau is an optimizer and its ReduceLROnPlateau scheduler.
const plateau = "import torch\nopt = torch.optim.SGD([torch.zeros(1)], lr=0.1)\nsched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)\n"

// TestPyUseIdioms: idioms of ordinary training scripts that stop 29 follows
// (docs/classifier.md "Stop 29"): each case is a new pattern, not a copy
// of a held-out program.
func TestPyUseIdioms(t *testing.T) {
	item, flt, tol := pyRead{kind: readItem}, pyRead{kind: readFloat}, pyRead{kind: readTolist}
	cases := []struct {
		name string
		src  string
		rd   pyRead
		use  Use
	}{
		{"a meter printed through __str__'s % of a tuple, its sync never called", meterStr +
			"def f(xs):\n    m = Meter()\n    for x in xs:\n        m.update(x.sum().item())  # <-\n        print(m)\n", item, UseLog},
		{"the same meter whose sync is called: the total goes to the GPU", meterStr +
			"def f(xs):\n    m = Meter()\n    for x in xs:\n        m.update(x.sum().item())  # <-\n    m.sync()\n    print(m)\n", item, UseNone},
		{"a chain of four attributes to a property tested in the step", spikeWatch +
			"def f(xs, opt):\n    w = SpikeWatch()\n    for x in xs:\n        w.push(x.sum())\n        if w.high:\n            continue\n        opt.step()\n", flt, UseBranch},
		{"the same chain only printed", spikeWatch +
			"def f(xs):\n    w = SpikeWatch()\n    for x in xs:\n        w.push(x.sum())\n        print(w.high, w.avg)\n", flt, UseLog},
		{"a window's statistics.fmean returned and printed", "import statistics\nclass Win:\n    def __init__(self):\n        self.vals = []\n" +
			"    def push(self, t):\n        self.vals.append(t.item())  # <-\n    def mean(self):\n        return statistics.fmean(self.vals)\n" +
			"def f(xs):\n    w = Win()\n    for x in xs:\n        w.push(x)\n        print(round(w.mean(), 3))\n", item, UseLog},
		{"a window's statistics.median tested", "import statistics\nclass Win:\n    def __init__(self):\n        self.vals = []\n" +
			"    def push(self, t):\n        self.vals.append(t.item())  # <-\n    def median(self):\n        return statistics.median(self.vals)\n" +
			"def f(xs):\n    w = Win()\n    for x in xs:\n        w.push(x)\n        if w.median() > 2:\n            break\n", item, UseBranch},
		{"a record dumped to JSON lines, printed after the loop", "import json\ndef f(xs):\n    lines = []\n    for i, x in enumerate(xs):\n" +
			"        rec = {'i': i, 'loss': x.item()}  # <-\n        lines.append(json.dumps(rec))\n    print('\\n'.join(lines))\n", item, UseLog},
		{"a namedtuple's field tested", "from collections import namedtuple\nStat = namedtuple('Stat', 'step loss norm')\n" +
			"def f(xs, opt):\n    for i, x in enumerate(xs):\n        s = Stat(i, *x.tolist())  # <-\n        if s.norm > 5:\n            continue\n        opt.step()\n", tol, UseBranch},
		{"a dataclass's fields only printed", "from dataclasses import dataclass\n@dataclass\nclass Row:\n    step: int\n    loss: float\n" +
			"def f(xs):\n    rows = []\n    for i, x in enumerate(xs):\n        r = Row(i, x.item())  # <-\n        print(r.step, r.loss)\n        rows.append(r)\n", item, UseLog},
		{"a dict of logs iterated into a history, printed", "class Hist:\n    def __init__(self):\n        self.h = {}\n" +
			"    def add(self, logs=None):\n        logs = logs or {}\n        for k, v in logs.items():\n            self.h.setdefault(k, []).append(v)\n" +
			"def f(xs):\n    hist = Hist()\n    for x in xs:\n        hist.add({'loss': x.item()})  # <-\n    print(hist.h)\n", item, UseLog},
		{"a dict of logs iterated and a value tested", "def f(xs):\n    for x in xs:\n        logs = {'loss': x.item()}  # <-\n" +
			"        for k, v in logs.items():\n            if v > 9:\n                return k\n", item, UseBranch},
		{"a None test of a kept value decides nothing", "class Keep:\n    def __init__(self):\n        self.first = None\n" +
			"    def put(self, v):\n        if self.first is None:\n            self.first = v\n        print(v / self.first)\n" +
			"def f(xs):\n    k = Keep()\n    for x in xs:\n        k.put(x.item())  # <-\n", item, UseLog},
		{"a pair unpacked from tolist into attributes, their ratio asserted", "class Pair:\n    def __init__(self):\n        self.a = None\n        self.b = None\n" +
			"    def put(self, p):\n        self.a, self.b = p.tolist()  # <-\n        r = self.a / self.b\n        assert r < 10\n" +
			"def f(xs):\n    q = Pair()\n    for x in xs:\n        q.put(x)\n", tol, UseBranch},
		{"a best tested only once the step loop is over", bestKeeper +
			"def main(x, model):\n    b = Best()\n    def step(i):\n        b.update(x.sum().item())  # <-\n    measure(step)\n    if b.best < 0.5:\n        torch.save(model, 'good.pt')\n", item, UseLog},
		{"a best seeded once before the loop, tested only after it", bestKeeper +
			"def main(x, model):\n    b = Best()\n    b.update(9.0)\n    def step(i):\n        b.update(x.sum().item())  # <-\n    measure(step)\n    if b.best < 0.5:\n        torch.save(model, 'good.pt')\n", item, UseLog},
		{"a best handed elsewhere too is not taken as read after its fills", bestKeeper +
			"def main(x, model):\n    b = Best()\n    keep = [b]\n    def step(i):\n        b.update(x.sum().item())  # <-\n    measure(step)\n    if b.best < 0.5:\n        torch.save(model, 'good.pt')\n", item, UseBranch},
		{"the same best tested inside the step", bestKeeper +
			"def main(x, opt):\n    b = Best()\n    def step(i):\n        b.update(x.sum().item())  # <-\n        if b.best < 0.5:\n            return\n        opt.step()\n    measure(step)\n", item, UseBranch},
		{"the same best tested after the loop, inside an outer loop that steps again", bestKeeper +
			"def main(x, opt):\n    b = Best()\n    def step(i):\n        b.update(x.sum().item())  # <-\n    for epoch in range(3):\n        measure(step)\n        if b.best < 0.5:\n            opt.step()\n", item, UseBranch},
		{"a metric handed to ReduceLROnPlateau's step sets the learning rate", plateau +
			"def f(xs):\n    for x in xs:\n        m = float(x.mean())  # <-\n        print('%.3f' % m)\n        sched.step(m)\n", flt, UseBranch},
		{"a step of another scheduler is no test of it", plateau +
			"cos = torch.optim.lr_scheduler.CosineAnnealingLR(opt, 10)\ndef f(xs):\n    for x in xs:\n        m = float(x.mean())  # <-\n        print('%.3f' % m)\n        cos.step()\n", flt, UseLog},
		{"a comprehension over a copy computes a list whose sum is printed", "import math\n" +
			"def f(xs):\n    for x in xs:\n        pc = [math.sqrt(v) * 100 for v in x.tolist()]  # <-\n        print(sum(pc))\n", tol, UseLog},
		{"the same list's sum handed to ReduceLROnPlateau", plateau + "import math\n" +
			"def f(xs):\n    for x in xs:\n        pc = [math.sqrt(v) * 100 for v in x.tolist()]  # <-\n        sched.step(sum(pc))\n", tol, UseBranch},
		{"a filtered comprehension's sum printed", "import math\n" +
			"def f(xs):\n    for x in xs:\n        pc = [v for v in x.tolist() if not math.isnan(v)]  # <-\n        print(sum(pc))\n", tol, UseLog},
		{"a filtered list whose emptiness is tested", "def f(xs, opt):\n    for x in xs:\n        pc = [v for v in x.tolist() if v > 0]  # <-\n        if pc:\n            opt.step()\n", tol, UseBranch},
		{"a filtered list iterated by a loop that also steps is not only printed", "def f(xs, opt):\n    for x in xs:\n        pc = [v for v in x.tolist() if v > 0]  # <-\n        for v in pc:\n            print(v)\n            opt.step()\n", tol, UseNone},
		{"a function that only picks a record of constants to return", "import collections\nVerdict = collections.namedtuple('Verdict', 'code label')\nLABELS = {0: 'pass', 2: 'fail'}\n" +
			"def verdict(v):\n    if v > 1.0:\n        return Verdict(2, LABELS[2])\n    return Verdict(0, LABELS[0])\n" +
			"def f(xs):\n    for x in xs:\n        r = verdict(x.sum().item())  # <-\n        print(r.label)\n", item, UseLog},
		{"the same record carrying the value itself", "import collections\nVerdict = collections.namedtuple('Verdict', 'code label')\n" +
			"def verdict(v):\n    if v > 1.0:\n        return Verdict(v, 'fail')\n    return Verdict(0, 'pass')\n" +
			"def f(xs):\n    for x in xs:\n        r = verdict(x.sum().item())  # <-\n        print(r.label)\n", item, UseBranch},
		{"a value returned in a dict's entry, another entry tested", "def wrap(v):\n    return {'step': 1, 'loss': v}\n" +
			"def f(xs):\n    for x in xs:\n        m = wrap(x.sum().item())  # <-\n        if m['step'] % 10 == 0:\n            print(m['loss'])\n", item, UseLog},
		{"the same entry tested", "def wrap(v):\n    return {'step': 1, 'loss': v}\n" +
			"def f(xs, opt):\n    for x in xs:\n        m = wrap(x.sum().item())  # <-\n        if m['loss'] > 1:\n            opt.step()\n", item, UseBranch},
		{"a comprehension whose body calls out is not followed", "def f(xs, model):\n    for x in xs:\n        pc = [model.update(v) for v in x.tolist()]  # <-\n        print(pc)\n", tol, UseNone},
	}
	for _, tc := range cases {
		if out, ok := pyUseMarked(t, tc.name, tc.src, tc.rd); ok && out.use != tc.use {
			t.Errorf("%s: use %v; want %v", tc.name, out.use, tc.use)
		}
	}
}
