package classify

import "testing"

// TestProgramDeeperBookkeeping: the rules of stop 33 (docs/classifier.md,
// "Deeper bookkeeping (stop 33)") — each with a twin whose one changed
// line makes the read needed, or leaves it not known.
func TestProgramDeeperBookkeeping(t *testing.T) {
	const book = "def fold(s, v):\n    s['n'] += 1\n    track(s, v)\n\n" +
		"def track(s, v):\n    if v < s['best']:\n        s['best'] = v\n        s['bad'] = 0\n    else:\n        s['bad'] += 1\n\n" +
		"def tired(s):\n    return s['bad'] >= 2\n\n" +
		"def note(s, i):\n    s['bad'] = 0\n    s['marks'].append(i)\n\n" +
		"def bump(s, v):\n    track(s, v)\n    return s['bad']\n\n" +
		"def summary(s):\n    return 'n={n} marks={m}'.format(m=len(s['marks']), **s)\n"
	bookProg := func(after string) string {
		return "import torch\nfrom _book import fold, tired, note, summary\nx = torch.randn(4, device='cuda')\n" +
			"s = {'n': 0, 'best': 1e9, 'bad': 0, 'marks': []}\n" +
			"def step(i):\n    v = (x * i).sum().item()\n    fold(s, v)\n    if tired(s):\n" + after +
			"for i in range(5):\n    step(i)\nprint(summary(s))\n"
	}
	const acc = "def push(acc, v):\n    _push_window(acc, v)\n    acc['n'] += 1\n\n" +
		"def _push_window(acc, v):\n    acc['win'].append(v)\n    if len(acc['win']) > 4:\n        acc['win'].pop(0)\n    _update_peak(acc, v)\n\n" +
		"def _update_peak(acc, v):\n    if v > acc['peak']:\n        acc['peak'] = v\n        acc['peak_at'] = acc['n']\n\n" +
		"def line(acc):\n    return 'n={n} peak={peak:.3f} at {peak_at}'.format(**acc)\n"
	accProg := func(after string) string {
		return "import torch\nfrom _acc import push, line\nx = torch.randn(4, device='cuda')\n" +
			"acc = {'n': 0, 'peak': -1e9, 'peak_at': None, 'win': []}\n" +
			"for i in range(5):\n    v = (x * i).sum().item()\n    push(acc, v)\n" + after + "print(line(acc))\n"
	}
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		// Bookkeeping four calls deep: what the helpers store is read back by
		// another helper whose answer is tested.
		{"a plateau noted by a helper, the count printed", map[string]string{"prog.py": bookProg("        note(s, i)\n"), "_book.py": book}, "false/logging"},
		{"a plateau that scales the input", map[string]string{"prog.py": bookProg("        x.mul_(0.5)\n"), "_book.py": book}, "true/control-flow"},
		{"a plateau noted, the count of notes tested", map[string]string{"prog.py": bookProg("        note(s, i)\n    if len(s['marks']) > 1:\n        x.mul_(0.5)\n"),
			"_book.py": book}, "true/control-flow"},
		// A helper that returns the entry another helper set: followed on
		// from the helper's calls.
		{"a count returned by a helper, only noted", map[string]string{"prog.py": "import torch\nfrom _book import bump, note, summary\n" +
			"x = torch.randn(4, device='cuda')\ns = {'n': 0, 'best': 1e9, 'bad': 0, 'marks': []}\n" +
			"for i in range(5):\n    if bump(s, (x * i).sum().item()) > 1:\n        note(s, i)\nprint(summary(s))\n", "_book.py": book}, "false/logging"},
		{"a count returned by a helper, tested to scale", map[string]string{"prog.py": "import torch\nfrom _book import bump, note, summary\n" +
			"x = torch.randn(4, device='cuda')\ns = {'n': 0, 'best': 1e9, 'bad': 0, 'marks': []}\n" +
			"for i in range(5):\n    if bump(s, (x * i).sum().item()) > 1:\n        x.mul_(0.5)\nprint(summary(s))\n", "_book.py": book}, "true/control-flow"},
		// A peak and a bounded window kept three calls deep, the dict
		// formatted whole: the window's trim tests its length, which is not
		// known (true at c2f2129); its twin tests the peak.
		{"a peak kept by helpers, formatted whole", map[string]string{"prog.py": accProg(""), "_acc.py": acc}, ""},
		{"a peak kept by helpers, tested", map[string]string{"prog.py": accProg("    if acc['peak'] > 3:\n        x.mul_(0.5)\n"), "_acc.py": acc}, "true/control-flow"},
		// Recording idioms in an arm: a loop over the optimizer's groups
		// that only reads them, a helper that appends a line to a file and
		// returns a count the caller drops.
		{"a loop in an arm that only notes each group's lr", map[string]string{"prog.py": optProg("            notes.append('lr %g' % g['lr'])\n")}, "false/logging"},
		{"a loop in an arm that halves each group's lr", map[string]string{"prog.py": optProg("            g['lr'] = g['lr'] * 0.5\n")}, "true/control-flow"},
		{"a helper that appends a line to a file, its count dropped", map[string]string{"prog.py": fileProg("    with open(path, 'a') as f:\n        f.write(text + '\\n')\n")}, "false/logging"},
		{"a helper that appends a line to a file, its count tested elsewhere", map[string]string{"prog.py": fileProg("    with open(path, 'a') as f:\n        f.write(text + '\\n')\n") +
			"if log_line('/tmp/lines.log', 'end') > 2:\n    x.mul_(0.5)\n"}, "true/control-flow"},
		{"a helper that scales the input under no_grad", map[string]string{"prog.py": fileProg("    with torch.no_grad():\n        x.mul_(0.5)\n")}, "true/control-flow"},
		// The length of a list read back is its tensor's shape: what it sizes
		// is not known from the values.
		{"the length of a list read back sizes a loop", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nout = []\n" +
			"for i in range(3):\n    vals = (x * i).tolist()\n    for j in range(len(vals)):\n        out.append(j)\nprint(out)\n"}, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkAgreeing(t, c.files, 4, c.want) })
	}
}

// optProg is a loop that tests a read and, when it is large, walks the
// optimizer's parameter groups with body.
func optProg(body string) string {
	return "import torch\nmodel = torch.nn.Linear(4, 4).cuda()\nopt = torch.optim.SGD(model.parameters(), lr=0.1)\n" +
		"x = torch.randn(4, device='cuda')\nnotes = []\n" +
		"for i in range(3):\n    v = (model(x) * i).sum().item()\n    if v > 1:\n        for g in opt.param_groups:\n" + body +
		"print(notes)\n"
}

// fileProg is a loop that tests a read and, when it is large, calls a
// helper whose body starts with body, then counts a line and returns the
// count.
func fileProg(body string) string {
	return "import torch\nx = torch.randn(4, device='cuda')\ncounts = {'lines': 0}\n" +
		"def log_line(path, text):\n" + body + "    counts['lines'] += 1\n    return counts['lines']\n" +
		"for i in range(3):\n    v = (x * i).sum().item()\n    if v > 1:\n        log_line('/tmp/lines.log', 'v=%f' % v)\nprint(counts)\n"
}
