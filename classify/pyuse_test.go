package classify

import (
	"fmt"
	"strings"
	"testing"
)

// bestNote is a class that keeps the best value it is handed and says
// whether it improved.
const bestNote = "class BestNote:\n    def __init__(self):\n        self.best = None\n        self.streak = 0\n" +
	"    def consider(self, value):\n        v = float(value)\n        if self.best is None or v < self.best:\n            self.best = v\n            self.streak = 0\n            return True\n        self.streak += 1\n        return False\n"

// monitorClass classifies a value into a word with NaN tests, keeps an
// exponential average, counts the words, keeps a streak and sets an alarm
// flag; summary() formats its state.
const monitorClass = "import math\nclass Monitor:\n    def __init__(self):\n        self.ema = None\n        self.counts = {'ok': 0, 'spike': 0, 'nan': 0}\n" +
	"        self.streak = 0\n        self.alarm = False\n" +
	"    def update(self, value):\n        if math.isnan(value) or math.isinf(value):\n            word = 'nan'\n" +
	"        elif self.ema is None or value <= 3.0 * self.ema:\n            word = 'ok'\n        else:\n            word = 'spike'\n" +
	"        if math.isfinite(value):\n            self.ema = value if self.ema is None else 0.9 * self.ema + 0.1 * value\n" +
	"        self.counts[word] += 1\n        self.streak = self.streak + 1 if word != 'ok' else 0\n" +
	"        self.alarm = word == 'nan' or self.streak >= 3\n        return word\n" +
	"    def summary(self):\n        counts = ' '.join(f'{w}={n}' for w, n in self.counts.items() if n)\n" +
	"        return f\"ema={self.ema} streak={self.streak} alarm={'yes' if self.alarm else 'no'} [{counts}]\"\n\n"

// historyClass keeps, under a test of the value, a count and a history
// list on self; __str__ formats them.
const historyClass = "class Bands:\n    def __init__(self):\n        self.n_high = 0\n        self.history = []\n" +
	"    def record(self, v):\n        if v > 0.5:\n            self.n_high += 1\n            self.history.append(('high', v))\n" +
	"    def __str__(self):\n        return f'{self.n_high} high: ' + ', '.join(f'{b} {v:.3f}' for b, v in self.history)\n\n"

// onlyFile is a program of one file: the one analysed.
var onlyFile = otherFiles{known: true}

// TestPyUse runs the parse-tree analysis on small functions: the read is on
// the line marked "# <-".
func TestPyUse(t *testing.T) {
	item, truth, cp := pyRead{kind: readItem}, pyRead{kind: readTruth}, pyRead{kind: readCopy}
	cases := []struct {
		name     string
		src      string
		rd       pyRead
		use      Use
		returned bool
	}{
		{"if test", "def f(x):\n    if x.item() > 0:  # <-\n        pass\n", item, UseBranch, false},
		{"while test", "def f(x):\n    while x.item() > 0:  # <-\n        x = x - 1\n", item, UseBranch, false},
		{"assert", "def f(x):\n    assert x.item() < 3  # <-\n", item, UseBranch, false},
		{"ternary test", "def f(x, a, b):\n    y = a() if x.item() > 0 else b()  # <-\n    return y\n", item, UseBranch, false},
		{"ternary that only picks a value", "def f(x, a, b):\n    y = a if x.item() > 0 else b  # <-\n    return y\n", item, UseNone, true},
		{"and operand", "def f(x, g):\n    ok = x.item() and g()  # <-\n", item, UseBranch, false},
		{"bool() in a test", "def f(x):\n    if bool(x):  # <-\n        return 1\n", pyRead{kind: readTruth}, UseBranch, false},
		{"truth test", "def f(x):\n    if (x > 0).any():  # <-\n        return 1\n", truth, UseBranch, false},
		{"python min over tensors", "def f(best, v):\n    best[0] = min(best[0], v)  # <-\n", truth, UseBranch, false},
		{"bool stored", "def f(x, flags):\n    flags.append(bool(x))  # <-\n", truth, UseLog, false},
		{"body of a one-line if", "def f(x, s):\n    if s % 100 == 0: print(x.item())  # <-\n", item, UseLog, false},
		{"print", "def f(x):\n    print('loss', x.item())  # <-\n", item, UseLog, false},
		{"logger", "def f(x, logger):\n    logger.info('loss %f', x.item())  # <-\n", item, UseLog, false},
		{"logging module", "def f(x):\n    logging.warning('loss %f', x.item())  # <-\n", item, UseLog, false},
		{"math.log is not a logger", "def f(x):\n    y = math.log(x.item())  # <-\n    if y > 0:\n        return\n    f(x)\n", item, UseBranch, false},
		{"math function, then printed", "def f(x):\n    y = math.log(x.item())  # <-\n    print(y)\n", item, UseLog, false},
		{"NaN test that only prints", "def f(x):\n    v = x.item()  # <-\n    if math.isnan(v) or math.isinf(v):\n        print('bad')\n", item, UseLog, false},
		{"NaN test that stops", "def f(x):\n    v = x.item()  # <-\n    if np.isnan(v):\n        raise ValueError(v)\n", item, UseBranch, false},
		// stop 28: what a monitor's method sets, followed to where it is read
		{"a summary method formats the counts", monitorClass + "def main(x):\n    m = Monitor()\n    m.update(x.item())  # <-\n    print(m.summary())\n", item, UseLog, false},
		{"a flag set from the word, printed", monitorClass + "def main(x):\n    m = Monitor()\n    w = m.update(x.item())  # <-\n    print(w, m.alarm, m.streak)\n", item, UseLog, false},
		{"a flag set from the word, only printed under a test", monitorClass + "def main(x):\n    m = Monitor()\n    m.update(x.item())  # <-\n    if m.alarm:\n        print('alarm', m.summary())\n", item, UseLog, false},
		{"a flag set from the word skips the step", monitorClass + "def main(x, opt):\n    m = Monitor()\n    m.update(x.item())  # <-\n    if m.alarm:\n        return\n    opt.step()\n", item, UseBranch, false},
		{"a library method named as the attribute", "class M:\n    def __init__(self):\n        self.mean = 0.0\n    def add(self, v):\n        self.mean = 0.9 * self.mean + 0.1 * v\n" +
			"def main(x, out):\n    m = M()\n    m.add(x.item())  # <-\n    if out.mean() > 0:\n        return\n    print(m.mean)\n", item, UseLog, false},
		{"the same name, the program's own method tested", "class M:\n    def __init__(self):\n        self.total = 0.0\n    def add(self, v):\n        self.total += v\n    def mean(self):\n        return self.total / 3\n" +
			"def main(x, opt):\n    m = M()\n    m.add(x.item())  # <-\n    if m.mean() > 0:\n        return\n    opt.step()\n", item, UseBranch, false},
		{"a best-so-far dict updated under its own test", "def main(xs, notes):\n    best = {'val': float('inf'), 'step': None}\n    for i, x in enumerate(xs):\n" +
			"        val = x.item()  # <-\n        improved = val < best['val']\n        if improved:\n            best.update(val=val, step=i)\n            notes.write(f'new best {val}')\n" +
			"        print(f\"{val:.3f} {'*' if improved else ''}\")\n    print(best)\n", item, UseLog, false},
		{"a best-so-far dict that decides a save", "def main(xs, model, save):\n    best = {'val': float('inf')}\n    for x in xs:\n" +
			"        val = x.item()  # <-\n        if val < best['val']:\n            best.update(val=val)\n            save(model)\n", item, UseBranch, false},
		{"a history kept on self under a test, only formatted", historyClass + "def main(x):\n    c = Bands()\n    c.record(x.item())  # <-\n    print(c)\n", item, UseLog, false},
		{"a history kept on self under a test, its length tested", historyClass + "def main(x, opt):\n    c = Bands()\n    c.record(x.item())  # <-\n    if len(c.history) > 3:\n        return\n    opt.step()\n", item, UseBranch, false},
		{"not of a NaN test, printed", "def f(x):\n    ok = not math.isnan(x.item())  # <-\n    print(ok)\n", item, UseLog, false},
		{"tqdm postfix", "def f(x, bar):\n    bar.set_postfix(loss=x.item())  # <-\n", item, UseLog, false},
		{"tensorboard", "def f(x, w, i):\n    w.add_scalar('loss', x.item(), i)  # <-\n", item, UseLog, false},
		{"lightning self.log", "def f(self, x):\n    self.log('loss', x.item())  # <-\n", item, UseLog, false},
		{"f-string printed", "def f(x):\n    print(f\"{x.item():.3f}\")  # <-\n", item, UseLog, false},
		{"f-string, then printed", "def f(x):\n    s = f\"loss {x.item():.3f}\"  # <-\n    print(s)\n", item, UseLog, false},
		{"percent format logged", "def f(x, log):\n    log.info('%.3f' % x.item())  # <-\n", item, UseLog, false},
		{"subscript store", "def f(x, m):\n    m['loss'] = x.item()  # <-\n", item, UseLog, false},
		{"attribute store", "class C:\n    def f(self, x):\n        self.last = x.item()  # <-\n", item, UseLog, false},
		{"store into a library object's attribute", "def f(x, opt):\n    opt.param_groups[0]['lr'] = 0.1 if x.item() > 1 else 0.01  # <-\n", item, UseNone, false},
		{"store into a library object's entries", "def f(x, opt):\n    lr = 0.1 if x.item() > 1 else 0.01  # <-\n    for g in opt.param_groups:\n        g['lr'] = lr\n", item, UseNone, false},
		{"append", "def f(x, out):\n    out.append(x.item())  # <-\n", item, UseLog, false},
		{"accumulate", "def f(x, tot):\n    tot += x.item()  # <-\n    return None\n", item, UseLog, false},
		{"accumulate into element", "def f(x, run):\n    run[0] += x.item()  # <-\n", item, UseLog, false},
		{"accumulator tested later", "def f(xs):\n    tot = 0.0\n    for x in xs:\n        tot += x.item()  # <-\n        if tot > 3:\n            break\n", item, UseBranch, false},
		{"metric dict", "def f(x, a, hist):\n    m = {'loss': x.item(), 'acc': a}  # <-\n    hist.append(m)\n", item, UseLog, false},
		{"variable logged", "def f(x):\n    v = x.item()  # <-\n    print(v)\n    logger.info('%f', v)\n", item, UseLog, false},
		{"variable logged and tested", "def f(x):\n    v = x.item()  # <-\n    print(v)\n    if v > 1:\n        pass\n", item, UseBranch, false},
		{"variable tested in a loop before", "def f(xs):\n    v = 0\n    for x in xs:\n        if v > 1:\n            break\n        v = x.item()  # <-\n", item, UseBranch, false},
		{"walrus", "def f(x):\n    if (v := x.item()) > 0:  # <-\n        x = x * v\n", item, UseBranch, false},
		{"walrus, the test only decides a print", "def f(x):\n    if (v := x.item()) > 0:  # <-\n        print(v)\n", item, UseLog, false},
		{"variable returned", "def f(x):\n    v = x.item()  # <-\n    return v\n", item, UseNone, true},
		{"returned", "def f(x):\n    return x.item()  # <-\n", item, UseNone, true},
		{"returned and logged: the caller decides", "def f(x):\n    v = x.item()  # <-\n    print(v)\n    return v\n", item, UseNone, true},
		{"returned, logged and tested", "def f(x):\n    v = x.item()  # <-\n    print(v)\n    if v > 1:\n        pass\n    return v\n", item, UseBranch, false},
		{"unknown call", "def f(x, g):\n    g(x.item())  # <-\n", item, UseNone, false},
		{"variable into an unknown call", "def f(x, g):\n    v = x.item()  # <-\n    print(v)\n    g(v)\n", item, UseNone, false},
		{"operand of a tensor op", "def f(x, outs):\n    outs.append(x / x.abs().max().item())  # <-\n", item, UseNone, false},
		{"unused", "def f(x):\n    v = x.item()  # <-\n", item, UseNone, false},
		{"discarded", "def f(x):\n    x.item()  # <-\n", item, UseNone, false},
		{"shape argument", "def f(x, lengths):\n    n = int(lengths.max())  # <-\n    return x.new_zeros(x.shape[0], n)\n", pyRead{kind: readInt}, UseShape, false},
		{"torch.empty", "def f(x):\n    n = x.item()  # <-\n    return torch.empty(n)\n", item, UseShape, false},
		{"range of a loop: how many times it runs", "def f(x):\n    for i in range(x.item()):  # <-\n        print(i)\n", item, UseBranch, false},
		{"range made into a list: its length", "def f(x):\n    idx = list(range(x.item()))  # <-\n    return idx\n", item, UseShape, false},
		{"slice", "def f(x, y):\n    n = x.item()  # <-\n    print(n)\n    return y[:n]\n", item, UseShape, false},
		{"split sizes", "def f(x, c):\n    sizes = c.tolist()  # <-\n    return torch.split(x, sizes)\n", pyRead{kind: readTolist}, UseShape, false},
		{"max over values then logged", "def f(x, best):\n    best = max(best, x.item())  # <-\n    print(best)\n", item, UseLog, false},
		{"max then tested", "def f(x, best):\n    m = max(best, x.item())  # <-\n    if m > 3:\n        pass\n", item, UseBranch, false},
		{"float() logged", "def f(x):\n    print(float(x))  # <-\n", pyRead{kind: readFloat}, UseLog, false},
		{"two reads disagree", "def f(x, y):\n    print(x.item()) if y.item() > 0 else None  # <-\n", item, UseNone, false},
		{"multi-line call", "def f(x, log):\n    log.info(\n        'loss %f',\n        x.item(),  # <-\n    )\n", item, UseLog, false},
		{"match statement file", "def f(x, k):\n    match k:\n        case 1:\n            print(x.item())  # <-\n", item, UseLog, false},
		{"caller's call", "def g(x):\n    print(f(x))  # <-\n", pyRead{kind: readCall, fn: "f"}, UseLog, false},
		// Containers: kept for logging unless the function needs what is in them.
		{"appended, list printed", "def f(x):\n    h = []\n    h.append(x.item())  # <-\n    print(h)\n", item, UseLog, false},
		{"appended, list as sizes after the loop", "def f(x, y, cs):\n    sizes = []\n    for c in cs:\n        sizes.append(c.item())  # <-\n    return torch.split(y, sizes)\n", item, UseLater, false},
		{"appended, list as sizes inside the loop", "def f(x, y, cs):\n    sizes = []\n    for c in cs:\n        sizes.append(c.item())  # <-\n        y = torch.split(y, sizes)\n", item, UseNone, false},
		{"appended, list a parameter: its owner may read it", "def f(x, cs, sizes):\n    for c in cs:\n        sizes.append(c.item())  # <-\n    return torch.split(x, sizes)\n", item, UseNone, false},
		{"appended, list rebound", "def f(x, cs):\n    sizes = []\n    for c in cs:\n        sizes.append(c.item())  # <-\n    sizes = other\n    return sizes\n", item, UseNone, false},
		{"appended, not in a loop", "def f(x, y):\n    sizes = []\n    sizes.append(x.item())  # <-\n    return torch.split(y, sizes)\n", item, UseNone, false},
		{"appended, list iterated", "def f(x, ds):\n    out = []\n    out.append(x.item())  # <-\n    for d in out:\n        pass\n", item, UseNone, false},
		{"appended, list tested", "def f(x):\n    seen = []\n    seen.append(x.item())  # <-\n    if seen[-1] > 3:\n        pass\n", item, UseNone, false},
		{"dict literal, another key tested", "def f(x, i):\n    r = {'step': i, 'loss': x.item()}  # <-\n    if r['step'] % 10 == 0:\n        print(r)\n", item, UseLog, false},
		{"dict literal, its own key tested", "def f(x, i):\n    r = {'step': i, 'loss': x.item()}  # <-\n    if r['loss'] > 1:\n        return None\n", item, UseBranch, false},
		{"dict literal handed whole to an unknown call", "def f(x, i):\n    r = {'step': i, 'loss': x.item()}  # <-\n    if r['step'] > 1:\n        g(r)\n", item, UseNone, false},
		{"dict literal, a computed key read: it may be the value, tested", "def f(x, k):\n    r = {'loss': x.item()}  # <-\n    if r[k] > 1:\n        pass\n", item, UseBranch, false},
		{"dict literal, a computed key read only printed", "def f(x, k):\n    r = {'loss': x.item()}  # <-\n    print(r[k])\n", item, UseLog, false},
		{"a list's element tested", "def f(x):\n    v = x.tolist()  # <-\n    if v[0] > 1:\n        pass\n", pyRead{kind: readTolist}, UseBranch, false},
		{"a list's element stored back into it: not followed", "def f(x):\n    v = x.tolist()  # <-\n    v[0] += 1\n", pyRead{kind: readTolist}, UseNone, false},
		{"stored into a nested dict that sizes a tensor", "def f(x, out):\n    rec = {'c': {}}\n    rec['c']['n'] = int(x)  # <-\n    print(rec)\n    return out.narrow(0, 0, rec['c']['n'])\n", pyRead{kind: readInt}, UseShape, false},
		{"stored into a nested dict only printed", "def f(x):\n    rec = {'c': {}}\n    rec['c']['n'] = int(x)  # <-\n    print(rec)\n", pyRead{kind: readInt}, UseLog, false},
		{"stored into a call's result", "def f(x):\n    get()['n'] = x.item()  # <-\n", item, UseNone, false},
		{"stored, dict returned: the caller decides", "def f(x):\n    m = {}\n    m['n'] = x.item()  # <-\n    return m\n", item, UseNone, true},
		// Copies to the host (readCopy): kept for later, or needed at once.
		{"copy appended", "def f(x, out):\n    out.append(x.cpu())  # <-\n", cp, UseLog, false},
		{"copy chained to numpy, appended", "def f(p, out):\n    out.append(p.detach().cpu().numpy())  # <-\n", cp, UseLog, false},
		{"copy to('cpu') stored by key", "def f(x, preds, i):\n    preds[i] = x.argmax(-1).to('cpu')  # <-\n", cp, UseLog, false},
		{"copies in a dict comprehension, appended", "def f(m, snaps):\n    snaps.append({k: v.cpu() for k, v in m.items()})  # <-\n", cp, UseLog, false},
		{"copies in a list comprehension, appended", "def f(ts, snaps):\n    snaps.append([t.cpu() for t in ts])  # <-\n", cp, UseLog, false},
		{"copy tested at once, through a method: not known", "def f(h):\n    v = h.cpu()  # <-\n    if v.abs().max() > 3:\n        pass\n", cp, UseNone, false},
		{"copy tested at once", "def f(h):\n    v = h.cpu().numpy()  # <-\n    if v.any():\n        pass\n", cp, UseNone, false},
		{"copy into an unknown call", "def f(h):\n    np.save('a.npy', h.cpu().numpy())  # <-\n", cp, UseNone, false},
		{"copy iterated in a comprehension, returned", "def f(h):\n    return [v for v in h.cpu()]  # <-\n", cp, UseNone, true},
		// A closure's container is looked for where it is bound.
		{"closure list only printed", "def main():\n    kept = []\n    def step(x):\n        kept.append(x.item())  # <-\n    run(step)\n    print(len(kept))\n", item, UseLog, false},
		{"closure list iterated by its owner after the calls", "def main():\n    kept = []\n    def step(x):\n        kept.append(x.item())  # <-\n    run(step)\n    for k in kept:\n        pass\n", item, UseLater, false},
		{"closure list tested between calls: the test needs it", "def main():\n    kept = []\n    def step(x):\n        kept.append(x.item())  # <-\n    for e in range(3):\n        run(step)\n        if max(kept) > 3:\n            pass\n", item, UseBranch, false},
		{"closure stored: may run any time", "def main():\n    kept = []\n    def step(x):\n        kept.append(x.item())  # <-\n    hooks.append(step)\n    run()\n    for k in kept:\n        pass\n", item, UseNone, false},
		{"closure list tested inside the closure", "def main():\n    kept = []\n    def step(x):\n        kept.append(x.cpu())  # <-\n        if kept[-1].max() > 3:\n            pass\n    run(step)\n", cp, UseBranch, false},
		{"closure with a decorator that may register it", "def main():\n    kept = []\n    @app.route('/')\n    def step(x):\n        kept.append(x.item())  # <-\n    run(step)\n    for k in kept:\n        pass\n", item, UseNone, false},
		{"copies read after the loop", "def f(net, bs):\n    preds = []\n    for b in bs:\n        preds.append(net(b).cpu())  # <-\n    return torch.cat(preds)\n", cp, UseLater, false},
		{"copies handed to a checker of the file", "def check(h):\n    if h[-1].max() > 5:\n        raise ValueError\n\ndef f(h, hist):\n    hist.append(h.cpu())  # <-\n", cp, UseLog, false},
		{"copies handed to a checker that tests them", "def check(h):\n    if h[-1].max() > 5:\n        raise ValueError\n\ndef f(bs):\n    hist = []\n    for b in bs:\n        hist.append(b.cpu())  # <-\n        check(hist)\n", cp, UseBranch, false},
		{"copies handed to a function of the file that only appends", "def keep(x, acc):\n    acc.append(x)\n\ndef f(bs):\n    hist = []\n    for b in bs:\n        hist.append(b.cpu())  # <-\n        keep(1, hist)\n", cp, UseLog, false},
		{"copies handed to an unknown function", "def f(bs):\n    hist = []\n    for b in bs:\n        hist.append(b.cpu())  # <-\n        inspect(hist)\n", cp, UseNone, false},
		{"copies taken out under another name inside the loop", "def f(bs):\n    hist = []\n    for b in bs:\n        hist.append(b.cpu())  # <-\n        last = hist[-1]\n", cp, UseNone, false},
		{"copies counted inside the loop: the length needs no data", "def f(bs):\n    hist = []\n    for b in bs:\n        hist.append(b.cpu())  # <-\n        if len(hist) > 3:\n            pass\n", cp, UseLog, false},
		// An attribute is needed if any read of it in the file tests, returns or sizes.
		{"attribute returned by another method", "class G:\n    def observe(self, x):\n        self.last = x.item()  # <-\n    def diverged(self):\n        return self.last > 100\n\ndef train(g, xs):\n    for x in xs:\n        g.observe(x)\n        if g.diverged():\n            return\n", item, UseBranch, false},
		{"attribute tested in another method", "class M:\n    def record(self, x):\n        self.last = x.cpu()  # <-\n    def check(self):\n        if self.last.isnan().any():\n            raise ValueError\ndef f(m):\n    m.check()\n", cp, UseNone, false},
		{"attribute list appended, then returned", "class T:\n    def update(self, p):\n        self.hist.append(p.cpu())  # <-\n    def summary(self):\n        return sum(self.hist)\ndef f(t):\n    return t.summary()\n", cp, UseNone, false},
		{"attribute list only printed", "class T:\n    def update(self, p):\n        self.hist.append(p.cpu())  # <-\n    def show(self):\n        print(self.hist)\n", cp, UseLog, false},
		// Into the program's own functions (pyhelpers.go).
		{"handed to a function of the file that tests it", "def bad(v):\n    return v > 3\n\ndef f(x):\n    if bad(x.item()):  # <-\n        return 1\n", item, UseBranch, false},
		{"handed to a function of the file that prints it", "def show(v):\n    print('loss', v)\n\ndef f(x):\n    show(x.item())  # <-\n", item, UseLog, false},
		{"by keyword to a function that branches on it", "def clip(g, limit=1.0):\n    if g > limit:\n        opt.zero_grad()\n        return limit\n    return g\n\ndef f(x):\n    clip(limit=2.0, g=x.item())  # <-\n", item, UseBranch, false},
		{"by keyword to a pure function whose pick is tested", "def clip(g, limit=1.0):\n    if g > limit:\n        return limit\n    return g\n\ndef f(x, opt):\n    if clip(limit=2.0, g=x.item()) < 1:  # <-\n        opt.step()\n", item, UseBranch, false},
		{"a pure function's pick only printed", "def clip(g, limit=1.0):\n    if g > limit:\n        return limit\n    return g\n\ndef f(x):\n    print(clip(limit=2.0, g=x.item()))  # <-\n", item, UseLog, false},
		{"a pure function's pick as a tensor operand: not known", "def clip(g, limit=1.0):\n    if g > limit:\n        return limit / g\n    return 1.0\n\ndef f(x, w, grad):\n    w.sub_(grad * clip(x.item()))  # <-\n", item, UseNone, false},
		{"returned by the function, then logged at the call", "def scale(v, k=2.0):\n    return v * k\n\ndef f(x):\n    s = scale(x.item())  # <-\n    print(s)\n", item, UseLog, false},
		{"a parameter that a caller passes a tensor for is not a number", "def scale(v, k=2.0):\n    return v * k\n\ndef f(x, t):\n    s = scale(x.item(), t)  # <-\n    print(s)\n", item, UseNone, false},
		{"returned by the function, then tested at the call", "def scale(v):\n    return v * 2.0\n\ndef f(x):\n    if scale(x.item()) > 1:  # <-\n        x.mul_(0.5)\n", item, UseBranch, false},
		{"a module constant is a number", "LIMIT = 3.0\n\ndef f(x):\n    r = x.item() / LIMIT  # <-\n    print(r)\n", item, UseLog, false},
		{"a module name bound twice is not", "LIMIT = 3.0\nLIMIT = torch.ones(1)\n\ndef f(x):\n    r = x.item() / LIMIT  # <-\n    print(r)\n", item, UseNone, false},
		{"a function that reassigns its parameter: not followed", "def g(v):\n    v = 0\n    print(v)\n\ndef f(x):\n    g(x.item())  # <-\n", item, UseNone, false},
		{"after a splat: not followed", "def g(a, v):\n    print(v)\n\ndef f(x, args):\n    g(*args, x.item())  # <-\n", item, UseNone, false},
		{"a function of another name: not followed", "def g(v):\n    print(v)\n\ndef f(x):\n    h(x.item())  # <-\n", item, UseNone, false},
		{"recursion is bounded", "def g(v):\n    return g(v)\n\ndef f(x):\n    print(g(x.item()))  # <-\n", item, UseNone, false},
		{"a function that maps the value to a word, printed", "def trend(c, b, tol=0.1):\n    if c > b + tol:\n        return 'up'\n    return 'down'\n\ndef f(x, b):\n    print(trend(x.item(), b))  # <-\n", item, UseLog, false},
		{"a function that maps the value to a word, tested", "def trend(c, b):\n    if c > b:\n        return 'up'\n    return 'down'\n\ndef f(x, b):\n    if trend(x.item(), b) == 'up':  # <-\n        x.mul_(0.5)\n", item, UseBranch, false},
		{"a function that also acts is not a word map", "def trend(c, b, opt):\n    if c > b:\n        opt.zero_grad()\n        return 'up'\n    return 'down'\n\ndef f(x, b, o):\n    print(trend(x.item(), b, o))  # <-\n", item, UseBranch, false},
		{"a function that maps the value to a (level, text) pair, logged", "import logging\n\ndef pick(v, prev):\n    change = (v - prev) / max(abs(prev), 1e-9)\n    if change > 0.1:\n        return logging.WARNING, f'up {100 * change:.1f}%'\n    return logging.INFO, f'{v:.3f}'\n\ndef f(x, prev, log):\n    level, msg = pick(x.item(), prev)  # <-\n    log.log(level, msg)\n", item, UseLog, false},
		{"a (level, text) pair whose level is tested", "import logging\n\ndef pick(v):\n    if v > 0.1:\n        return logging.WARNING, 'up'\n    return logging.INFO, 'ok'\n\ndef f(x, opt):\n    level, msg = pick(x.item())  # <-\n    if level >= logging.WARNING:\n        opt.step()\n", item, UseBranch, false},
		{"a pair returned through a parameter is not a label, but a pure pick: printed", "def pick(v, box):\n    if v > 0.1:\n        return box.hi, 'up'\n    return box.lo, 'ok'\n\ndef f(x, b):\n    print(pick(x.item(), b))  # <-\n", item, UseLog, false},
		{"a type test of the value decides nothing", "def f(x):\n    v = x.item()  # <-\n    if isinstance(v, float):\n        print('%.3f' % v)\n    else:\n        print(v)\n", item, UseLog, false},
		{"a shadowed isinstance is the program's function", "def isinstance(a, b):\n    return a > 3\n\ndef f(x, opt):\n    v = x.item()  # <-\n    print(v)\n    if isinstance(v, float):\n        opt.step()\n", item, UseBranch, false},
		{"Python's isinstance before a step is no test of the value", "def f(x, opt):\n    v = x.item()  # <-\n    print(v)\n    if isinstance(v, float):\n        opt.step()\n", item, UseLog, false},
		{"joined into a line and printed", "def f(x, sep):\n    v = x.item()  # <-\n    print(sep.join([f'{v:.3f}', 'x']))\n", item, UseLog, false},
		{"joined from a generator and printed", "def f(x):\n    vs = x.tolist()  # <-\n    print(' '.join(f'{v:.2f}' for v in vs))\n", pyRead{kind: readTolist}, UseLog, false},
		{"a function picked by a pure function, then called", "def pick(rate):\n    if rate > 0.02:\n        return fine\n    return coarse\n\ndef f(x, u):\n    step = pick(x.item())  # <-\n    return step(u)\n", item, UseBranch, false},
		{"a pair picked by a function that also acts", "def pick(v, box):\n    if v > 0.1:\n        box.grow()\n        return box.hi, 'up'\n    return box.lo, 'ok'\n\ndef f(x, b):\n    print(pick(x.item(), b))  # <-\n", item, UseBranch, false},
		// A label or text whose use is not known leaves the value unknown: making
		// the test a branch again was tried (dd04322) and withdrawn after
		// round 16 (docs/classifier.md "Round 16").
		{"a label whose use is not known", "class Mode:\n    FAST = 1\n    SLOW = 2\n\ndef mode_for(v):\n    if v > 0.5:\n        return Mode.SLOW\n    return Mode.FAST\n\ndef f(x, st, run):\n    st['mode'] = mode_for(x.item())  # <-\n    run(depth=st['mode'])\n", item, UseNone, false},
		{"a picked text whose use is not known", "def f(x, g):\n    g('hi' if x.item() > 0 else 'lo')  # <-\n", item, UseNone, false},
		{"unpacked, one part tested", "def f(t, x):\n    lo, hi = t.tolist()  # <-\n    print(lo)\n    if hi > 3:\n        return x\n", pyRead{kind: readTolist}, UseBranch, false},
		{"unpacked, both parts logged", "def f(t):\n    lo, hi = t.tolist()  # <-\n    print(lo, hi)\n", pyRead{kind: readTolist}, UseLog, false},
		{"a loop variable of range() is a number", "RATE = 0.5\n\ndef predicted(r, p, rate=RATE):\n    return r * rate ** p\n\ndef f(x, y):\n    r = x.item()  # <-\n    for p in range(4):\n        if predicted(r, p) < 0.1:\n            break\n        y = y @ y\n", item, UseBranch, false},
		{"a local bound to a tensor is not a number", "def f(x, y):\n    k = y.sum()\n    r = x.item() * k  # <-\n    print(r)\n", item, UseNone, false},
		// A test whose arms only record (pyrecords.go).
		{"arms that only print and count", "def f(x, best):\n    n = 0\n    if x.item() < best:  # <-\n        print('better')\n        n += 1\n    else:\n        print('worse')\n    print(n)\n", item, UseLog, false},
		{"a count that a later test reads", "def f(x, best):\n    n = 0\n    if x.item() < best:  # <-\n        n += 1\n    if n > 3:\n        return 1\n", item, UseBranch, false},
		{"a best tracked and printed", "def f(xs):\n    best = 1e9\n    for x in xs:\n        cur = x.item()  # <-\n        if cur < best:\n            best = cur\n            print('new best', best)\n", item, UseLog, false},
		{"a best tracked, then a checkpoint saved", "def f(xs, m):\n    best = 1e9\n    for x in xs:\n        cur = x.item()  # <-\n        if cur < best:\n            best = cur\n            torch.save(m, 'best.pt')\n", item, UseBranch, false},
		{"an arm that changes a dict entry the step computes with", "def main(x):\n    st = {'lr': 0.1, 'best': 9.0}\n    def step(i):\n        v = float(x.sum())  # <-\n        if v < st['best']:\n            st['best'] = v\n        else:\n            st['lr'] *= 0.5\n        x.mul_(1 - st['lr'] * 1e-3 * x)\n    run(step)\n    print(st)\n", pyRead{kind: readFloat}, UseBranch, false},
		{"an arm that breaks", "def f(xs):\n    for x in xs:\n        if x.item() > 3:  # <-\n            print('stop')\n            break\n", item, UseBranch, false},
		{"a list filled under the test whose length is read", "def f(xs):\n    w = []\n    for x in xs:\n        if x.item() > 3:  # <-\n            w.append('hi')\n        if len(w) > 2:\n            break\n", item, UseBranch, false},
		{"a list filled under the test, printed after the loop", "def f(xs):\n    w = []\n    for x in xs:\n        if x.item() > 3:  # <-\n            w.append('hi')\n    print(w)\n", item, UseLog, false},
		{"an elif that calls: left a test", "def f(x, m):\n    if x.item() > 3:  # <-\n        print('hi')\n    elif m.check():\n        print('lo')\n", item, UseBranch, false},
		// A number under a constant key of a dict (pyhelpers.go).
		{"a dict entry only printed, other entries tested", "def main(x0):\n    st = {'x': x0, 'n': 0}\n    def step(i):\n        st['n'] += st['x'].sum().item()  # <-\n        if st['x'].max() > 3:\n            return 1\n    run(step)\n    print(st['n'])\n", item, UseLog, false},
		{"a dict entry tested", "def main(x0):\n    st = {'x': x0, 'best': 0}\n    def step(i):\n        st['best'] = st['x'].sum().item()  # <-\n        if st['best'] > 3:\n            st['x'].mul_(0.5)\n    run(step)\n", item, UseBranch, false},
		{"a dict entry carried into another entry that is tested", "def main(x0):\n    st = {'x': x0, 'cur': 0, 'best': 9}\n    def step(i):\n        st['cur'] = st['x'].sum().item()  # <-\n        st['best'] = min(st['best'], st['cur'])\n        if st['best'] < 1:\n            st['x'].mul_(0.5)\n    run(step)\n", item, UseBranch, false},
		{"a dict handed whole to a function", "def main(x0):\n    st = {'x': x0, 'n': 0}\n    def step(i):\n        st['n'] = st['x'].sum().item()  # <-\n        check(st)\n    run(step)\n", item, UseNone, false},
		// A test that picks between texts (pytext.go).
		{"a test that picks a word of a log line", "def f(x, best, log):\n    word = 'up' if x.item() > best else 'down'  # <-\n    log.append(f'{word}')\n", item, UseLog, false},
		{"a test that picks a word the program tests", "def f(x, best):\n    word = 'up' if x.item() > best else 'down'  # <-\n    if word == 'up':\n        pass\n", item, UseBranch, false},
		{"a test that picks an f-string", "def f(x, log, i):\n    msg = f'{i}: up' if x.item() > 1 else f'{i}: down'  # <-\n    log.info(msg)\n", item, UseLog, false},
		{"a test that picks between calls is control flow", "def f(x, a, b):\n    y = a() if x.item() > 0 else 'none'  # <-\n    print(y)\n", item, UseBranch, false},
		// Into the methods of the file's classes (pymethods.go).
		{"handed to a method that prints it", "class M:\n    def put(self, v, n=1):\n        print(v * n)\ndef f(x):\n    m = M()\n    m.put(x.item(), n=2)  # <-\n", item, UseLog, false},
		{"handed by keyword to a method that tests it", "class M:\n    def put(self, n, v=0.0):\n        if v > n:\n            raise ValueError(v)\ndef f(x):\n    m = M()\n    m.put(3, v=x.item())  # <-\n", item, UseBranch, false},
		{"handed through self.m to a method that prints it", "class M:\n    def put(self, v):\n        print(v)\nclass N:\n    def __init__(self):\n        self.m = M()\n    def step(self, x):\n        self.m.put(x.item())  # <-\n", item, UseLog, false},
		{"handed to a method whose result is tested", "class M:\n    def put(self, v):\n        return v > 3\ndef f(x):\n    m = M()\n    if m.put(x.item()):  # <-\n        x.mul_(0.5)\n", item, UseBranch, false},
		{"a receiver bound to two classes is not followed", "class M:\n    def put(self, v):\n        print(v)\nclass K:\n    def put(self, v):\n        if v:\n            raise ValueError(v)\ndef f(x, a):\n    m = M()\n    if a:\n        m = K()\n    m.put(x.item())  # <-\n", item, UseNone, false},
		{"a receiver handed in is not followed", "class M:\n    def put(self, v):\n        print(v)\ndef f(x, m):\n    m.put(x.item())  # <-\n", item, UseNone, false},
		{"a library's object is not followed into the program's method of that name (ReduceLROnPlateau's step decides)", "import torch\nclass M:\n    def step(self, v):\n        print(v)\ndef f(x, opt):\n    s = torch.optim.lr_scheduler.ReduceLROnPlateau(opt)\n    s.step(x.item())  # <-\n", item, UseBranch, false},
		{"a library's object is not followed", "import torch\nclass M:\n    def step(self, v):\n        print(v)\ndef f(x, opt):\n    s = torch.optim.lr_scheduler.StepLR(opt, 3)\n    s.step(x.item())  # <-\n", item, UseNone, false},
		{"self's method that a subclass overrides is not followed", "class M:\n    def put(self, v):\n        print(v)\n    def go(self, x):\n        self.put(x.item())  # <-\nclass K(M):\n    def put(self, v):\n        if v > 1:\n            raise ValueError(v)\n", item, UseNone, false},
		{"an inherited method is not followed", "class B:\n    def put(self, v):\n        print(v)\nclass M(B):\n    pass\ndef f(x):\n    m = M()\n    m.put(x.item())  # <-\n", item, UseNone, false},
		{"a staticmethod is followed, without self", "class M:\n    @staticmethod\n    def put(v):\n        print(v)\ndef f(x):\n    m = M()\n    m.put(x.item())  # <-\n", item, UseLog, false},
		{"a staticmethod that tests its first parameter", "class M:\n    @staticmethod\n    def bad(v, limit=9.0):\n        return v > limit\n    def check(self, v):\n        if self.bad(v):\n            raise ValueError('x')\ndef f(x):\n    m = M()\n    m.check(x.item())  # <-\n", item, UseBranch, false},
		{"a classmethod is not followed", "class M:\n    @classmethod\n    def put(cls, v):\n        print(v)\ndef f(x):\n    m = M()\n    m.put(x.item())  # <-\n", item, UseNone, false},
		// A test that only records and picks the constant returned
		// (pyrecords.go), and an attribute's best-so-far (pyelsewhere.go).
		{"a test that only picks the constant returned stays a test", "def f(x):\n    if x.item() > 3:  # <-\n        return 1\n", item, UseBranch, false},
		{"a test that records and picks the flag returned", "def better(v, best):\n    if v < best:\n        print('improved', v)\n        return True\n    return False\ndef f(x):\n    if better(x.item(), 3.0):  # <-\n        print('better')\n", item, UseLog, false},
		{"a flag returned that the caller tests for work", "def better(v, best):\n    if v < best:\n        print('improved', v)\n        return True\n    return False\ndef f(x):\n    if better(x.item(), 3.0):  # <-\n        x.mul_(0.5)\n", item, UseBranch, false},
		{"a test whose return skips work after it", "def better(v, x):\n    if v < 3.0:\n        print('improved', v)\n        return True\n    x.mul_(0.5)\n    return False\ndef f(x):\n    if better(x.item(), x):  # <-\n        print('better')\n", item, UseBranch, false},
		{"a best kept on self, picked flag printed", bestNote + "def f(x):\n    n = BestNote()\n    if n.consider(x.item()):  # <-\n        print('new best', n.best)\n    else:\n        print('no', n.streak)\n", item, UseLog, false},
		// Where the flag or the best decides the loop, the method's test
		// only sets state (pystate.go) whose use the cycle through the
		// attribute does not resolve: unknown, not a guess.
		{"a best kept on self, the flag stops the loop", bestNote + "def f(xs):\n    n = BestNote()\n    for x in xs:\n        if n.consider(x.item()):  # <-\n            print('new best', n.best)\n        else:\n            break\n", item, UseBranch, false},
		{"a best kept on self that the loop tests", bestNote + "def f(xs):\n    n = BestNote()\n    for x in xs:\n        if n.consider(x.item()):  # <-\n            print('new best', n.best)\n        if n.best < 0.1:\n            break\n", item, UseBranch, false},
		{"a method's test whose arm only sets state decides through what it sets", "class M:\n    def put(self, v):\n        if v > 3:\n            self.hot = True\n        return v\ndef f(x):\n    m = M()\n    m.put(x.item())  # <-\n    if m.hot:\n        x.mul_(0.5)\n", item, UseBranch, false},
		{"a method's test whose arm calls is a branch", "class M:\n    def put(self, v, x):\n        if v > 3:\n            x.mul_(0.5)\ndef f(x):\n    m = M()\n    m.put(x.item(), x)  # <-\n", item, UseBranch, false},
		{"a key of a counter only printed", "def f(x):\n    counts = {'up': 0, 'down': 0}\n    for i in range(3):\n        w = 'up' if x.item() > 0 else 'down'  # <-\n        counts[w] += 1\n    print(counts)\n", item, UseLog, false},
		{"a key of a counter tested in the loop is no log", "def f(x):\n    counts = {'up': 0, 'down': 0}\n    for i in range(3):\n        w = 'up' if x.item() > 0 else 'down'  # <-\n        counts[w] += 1\n        if counts['up'] > 1:\n            break\n", item, UseNone, false},
		{"a key of a fresh counter tested in the loop", "def f(x):\n    counts = {}\n    for i in range(3):\n        w = 'up' if x.item() > 0 else 'down'  # <-\n        counts[w] = counts.get(w, 0) + 1\n        if counts.get('up', 0) > 1:\n            break\n", item, UseBranch, false},
		{"a key read, not stored, is not followed", "def f(x, table):\n    k = int(x.item())  # <-\n    y = table[k]\n    print(y)\n", item, UseNone, false},
		{"written by json.dump after the loop", "def f(xs, path):\n    hist = []\n    for x in xs:\n        hist.append({'loss': x.item()})  # <-\n    with open(path, 'w') as fh:\n        json.dump(hist, fh)\n", item, UseLog, false},
		{"a csv row", "def f(x, w):\n    w.writerow([1, x.item()])  # <-\n", item, UseLog, false},
		{"a key looked up, the count kept", "def f(xs):\n    counts = {}\n    for x in xs:\n        w = 'hi' if x.item() > 0 else 'lo'  # <-\n        counts[w] = counts.get(w, 0) + 1\n    print(counts)\n", item, UseLog, false},
		{"a key looked up, the entry tested", "def f(x, limits):\n    w = 'hi' if x.item() > 0 else 'lo'  # <-\n    if limits.get(w, 0) > 3:\n        x.mul_(0.5)\n", item, UseBranch, false},
		{"stored, dict logged", "def f(x, log):\n    m = {}\n    m['n'] = x.item()  # <-\n    log.info('%s', m)\n", item, UseLog, false},
	}
	for _, tc := range cases {
		out, ok := pyUseMarked(t, tc.name, tc.src, tc.rd)
		if ok && (out.use != tc.use || out.returned != tc.returned) {
			t.Errorf("%s: use %v returned %v; want %v, %v", tc.name, out.use, out.returned, tc.use, tc.returned)
		}
	}
}

// pyUseMarked runs pyUse, as a program of one file, on the read of the
// line marked "# <-"; ok is false (and the test failed) when src does not
// parse.
func pyUseMarked(t *testing.T, name, src string, rd pyRead) (out pyOutcome, ok bool) {
	t.Helper()
	line := 0
	for i, l := range strings.Split(src, "\n") {
		if strings.Contains(l, "# <-") {
			line = i + 1
		}
	}
	out, parsed := pyUse([]byte(src), line, rd, onlyFile)
	if !parsed {
		t.Errorf("%s: does not parse", name)
	}
	return out, parsed
}

// TestPyUseUnparsed: a file that does not parse leaves the regexes to try.
func TestPyUseUnparsed(t *testing.T) {
	if _, parsed := pyUse([]byte("def f(:\n    print(x.item())\n"), 2, pyRead{kind: readItem}, onlyFile); parsed {
		t.Error("a broken file parsed")
	}
}

// TestPyUseBounded runs the analysis on a class whose every method tests
// and stores the others' attributes, the value handed to each: following
// the value into one method fans out into all of them. The query must
// end (the budget of maxQuerySteps) and answer cautiously, not "logged".
func TestPyUseBounded(t *testing.T) {
	const n = 30
	var b strings.Builder
	b.WriteString("import math\nclass Big:\n    def __init__(self):\n")
	for i := range n {
		fmt.Fprintf(&b, "        self.a%d = 0.0\n", i)
	}
	for m := range n {
		fmt.Fprintf(&b, "    def m%d(self, v):\n", m)
		for k := range 6 {
			i, j := (m*7+k*3)%n, (m*11+k*5+1)%n
			fmt.Fprintf(&b, "        if self.a%d > v * 0.5 or math.isnan(self.a%d):\n            self.a%d = self.a%d + v\n", i, j, (i+j+k)%n, i)
			fmt.Fprintf(&b, "        else:\n            self.a%d = 0.9 * self.a%d\n", (i*j+k)%n, j)
		}
		fmt.Fprintf(&b, "        return self.a%d\n", (m*13)%n)
	}
	b.WriteString("def main(x):\n    big = Big()\n")
	for m := range n {
		fmt.Fprintf(&b, "    print(big.m%d(x.item()))\n", m)
	}
	src := b.String()
	line := strings.Count(src[:strings.Index(src, "    print(big.m0(")], "\n") + 1
	out, parsed := pyUse([]byte(src), line, pyRead{kind: readItem}, onlyFile)
	if !parsed || out.use == UseLog {
		t.Errorf("parsed %v, use %d: want a cautious answer", parsed, out.use)
	}
}
