package classify

import "testing"

// TestProgramEntriesAndLeaves: the rules of stop 32 (docs/classifier.md,
// "Dict entries, early returns and search loops (stop 32)") — each with a
// twin whose one changed line makes the read needed.
func TestProgramEntriesAndLeaves(t *testing.T) {
	const watch = "import math\n\ndef new_watch():\n    return {'best': math.inf, 'bad': 0, 'seen': []}\n\n" +
		"def observe(w, v):\n    w['seen'].append(v)\n    if v < w['best']:\n        w['best'], w['bad'] = v, 0\n        return True\n" +
		"    w['bad'] += 1\n    return False\n\ndef tired(w):\n    return w['bad'] >= 2\n"
	prog := func(after string) string {
		return "import torch\nfrom _w import new_watch, observe, tired\nx = torch.randn(4, device='cuda')\nw = new_watch()\nnotes = []\n" +
			"for i in range(5):\n    if observe(w, (x * i).sum().item()):\n        notes.append(i)\n" + after + "print(w['best'], w['bad'], notes)\n"
	}
	const bands = "import torch\nBANDS = (('tight', 0.01), ('loose', 0.2))\nx = torch.randn(4, device='cuda')\nlines, alerts = [], []\n" +
		"def step(i):\n    v = (x * i).sum().item()\n    for name, lim in BANDS:\n        if abs(v) < lim:\n            band = name\n            break\n" +
		"    else:\n        band = 'wide'\n"
	cases := []struct {
		name  string
		files map[string]string
		want  string
	}{
		// A helper keeps a best and a count in a dict it is handed: the
		// caller's reads of those entries decide.
		{"a dict handed to a helper, its entries only printed", map[string]string{"prog.py": prog(""), "_w.py": watch}, "false/logging"},
		{"a dict handed to a helper, the caller tests an entry", map[string]string{"prog.py": prog("    if w['bad'] > 3:\n        break\n"), "_w.py": watch}, "true/control-flow"},
		{"a dict handed to a helper, another helper's answer tested", map[string]string{"prog.py": prog("    if tired(w):\n        break\n"), "_w.py": watch}, "true/control-flow"},
		{"a dict handed to a helper, another helper's answer only noted", map[string]string{"prog.py": prog("    if tired(w):\n        notes.append(-i)\n"), "_w.py": watch}, "false/logging"},
		// A best kept in an entry the same test reads: a cycle, not a use.
		{"a running best in a dict entry, printed", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nst = {'best': 1e9, 'x': x}\n" +
			"for i in range(3):\n    v = (st['x'] * i).sum().item()\n    if v < st['best']:\n        st['best'] = v\nprint(st['best'])\n"}, "false/logging"},
		{"a running best in a dict entry, tested", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nst = {'best': 1e9, 'x': x}\n" +
			"for i in range(3):\n    v = (st['x'] * i).sum().item()\n    if v < st['best']:\n        st['best'] = v\n    if st['best'] < 0.1:\n        break\n"}, "true/control-flow"},
		// An entry's list filled while the dict's other entries feed the GPU.
		{"appended to one entry of a state dict", map[string]string{"prog.py": "import torch\nst = {'x': torch.randn(4, device='cuda'), 'hist': []}\n" +
			"for i in range(3):\n    st['x'] = st['x'] * 0.5\n    st['hist'].append(st['x'].sum().item())\nprint(st['hist'])\n"}, "false/logging"},
		{"appended to an entry that a variable also holds, the variable tested", map[string]string{"prog.py": "import torch\nhist = []\nst = {'x': torch.randn(4, device='cuda'), 'hist': hist}\n" +
			"for i in range(3):\n    st['x'] = st['x'] * 0.5\n    st['hist'].append(st['x'].sum().item())\n    if len(hist) > 1 and hist[-1] > 3:\n        break\n"}, ""},
		{"appended to one entry of a state dict, its length tested", map[string]string{"prog.py": "import torch\nst = {'x': torch.randn(4, device='cuda'), 'hist': []}\n" +
			"for i in range(3):\n    st['x'] = st['x'] * 0.5\n    st['hist'].append(st['x'].sum().item())\n    if max(st['hist']) > 3:\n        break\n"}, "true/control-flow"},
		// An early return that skips only recording.
		{"an early return that skips a record", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nlines, alerts = [], []\n" +
			"def step(i):\n    v = (x * i).sum().item()\n    if v > 3:\n        alerts.append(i)\n        return\n    lines.append(v)\n" +
			"for i in range(3):\n    step(i)\nprint(lines, alerts)\n"}, "false/logging"},
		{"an early return that skips GPU work", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nlines, alerts = [], []\n" +
			"def step(i):\n    v = (x * i).sum().item()\n    if v > 3:\n        alerts.append(i)\n        return\n    x.mul_(0.5)\n" +
			"for i in range(3):\n    step(i)\nprint(lines, alerts)\n"}, "true/control-flow"},
		// A search loop that only picks a name.
		{"a band picked by a search loop, printed", map[string]string{"prog.py": bands + "    lines.append(band)\nfor i in range(3):\n    step(i)\nprint(lines)\n"}, "false/logging"},
		{"a band picked by a search loop, tested", map[string]string{"prog.py": bands + "    if band == 'wide':\n        x.mul_(0.5)\nfor i in range(3):\n    step(i)\n"}, "true/control-flow"},
		// A helper of the program that only records, called under a test.
		{"a recording helper called under a test", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nalerts = []\n" +
			"def note(i):\n    \"\"\"Keep the step for the summary.\"\"\"\n    alerts.append(i)\n" +
			"for i in range(3):\n    if (x * i).sum().item() > 3:\n        note(i)\nprint(alerts)\n"}, "false/logging"},
		{"a helper that works on the GPU, called under a test", map[string]string{"prog.py": "import torch\nx = torch.randn(4, device='cuda')\nalerts = []\n" +
			"def note(i):\n    alerts.append(i)\n    x.mul_(0.5)\n" +
			"for i in range(3):\n    if (x * i).sum().item() > 3:\n        note(i)\nprint(alerts)\n"}, "true/control-flow"},
		// A key read out of a table: the element's use.
		{"a bucket's entry of a table sizes a loop", map[string]string{"prog.py": bucketProg("PASSES = (0, 1, 2)\n", "    for _ in range(PASSES[k]):\n        x.mul_(0.5)\n")}, "true/control-flow"},
		{"a bucket's entry of a table only printed is not known", map[string]string{"prog.py": bucketProg("NAMES = ('lo', 'mid', 'hi')\n", "    print(NAMES[k])\n")}, ""},
		{"a bucket counted", map[string]string{"prog.py": bucketProg("hist = [0, 0, 0]\n", "    hist[k] += 1\nprint(hist)\n")}, "false/logging"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkAgreeing(t, c.files, 4, c.want) })
	}
}

// bucketProg is a loop that reads a value and finds its bucket among two
// thresholds with a search loop (`for k, t in enumerate(TH): … break`),
// with the module-level lines globals and the rest of the step after.
func bucketProg(globals, after string) string {
	return "import torch\nTH = (0.5, 1.0)\n" + globals + "x = torch.randn(4, device='cuda')\n" +
		"for i in range(3):\n    v = (x * i).sum().item()\n    for k, t in enumerate(TH):\n        if v < t:\n            break\n    else:\n        k = len(TH)\n" +
		after
}
