package classify

// What a place of the program does with the value it reads: the line's use
// (pyUse, followed to the callers while the value is returned), turned into
// the verdict the place stands for.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// used adds a read whose use its line decides.
func (f *placeFinder) used(pf *parsedFile, n *sitter.Node, kind placeKind, rd pyRead, what string) {
	use, ok := f.useOf(pf, n, rd, 0)
	if !ok {
		f.opaque(pf, n, what+"; its use is not followed")
		return
	}
	dep, cat := useVerdict(use, kind)
	if dep == DepUnknown {
		f.opaque(pf, n, what+"; its use is not followed")
		return
	}
	f.add(pf, n, kind, dep, cat, what+" "+useWords[use])
}

var useWords = map[Use]string{UseBranch: "that decides a branch", UseShape: "used as a size",
	UseLog: "only logged or kept", UseLater: "kept until after its loop"}

// useVerdict is the verdict of a place's use.
func useVerdict(use Use, kind placeKind) (Dependency, string) {
	switch use {
	case UseBranch:
		return DepTrue, CatControlFlow
	case UseShape:
		return DepTrue, CatDynamicShape
	case UseLog, UseLater:
		if kind == placeCopy {
			return DepFalse, CatDeviceToHost
		}
		return DepFalse, CatLogging
	}
	return DepUnknown, CatUnknown
}

// useOf works out the use of the value read at n: the line's, or, while
// the value is returned, that of every call of the function (all must
// agree; when it is also used another way not known, only a test or a
// size at the callers decides).
func (f *placeFinder) useOf(pf *parsedFile, n *sitter.Node, rd pyRead, depth int) (Use, bool) {
	line := int(n.StartPosition().Row) + 1
	o := pf.sf.pyUseOn(pf.src, pf.root, line, rd, f.prog.others(pf.path))
	if !o.returned {
		return o.use, o.use != UseNone
	}
	def := enclosingFunction(n)
	if def == nil || depth >= maxCallerDepth {
		return UseNone, false
	}
	name := pf.text(def.ChildByFieldName("name"))
	use, found := UseNone, false
	for _, ref := range f.types.identifiers(name) {
		c, cf := ref.node.Parent(), ref.file
		if c != nil && c.Kind() == "attribute" {
			c = c.Parent()
		}
		if c == nil || c.Kind() != "call" {
			continue
		}
		if cn, _ := callNameOf(cf, c.ChildByFieldName("function")); cn != name || f.analysis(cf).inUncalledMethod(c) {
			continue // another function's call, or a call no part of the program runs
		}
		if up := c.Parent(); up != nil && up.Kind() == "expression_statement" {
			continue // its result dropped: no use of the value there
		}
		u, ok := f.useOf(cf, c, pyRead{kind: readCall, fn: name, entry: o.entry}, depth+1)
		if !ok || found && u != use {
			return UseNone, false
		}
		use, found = u, true
	}
	if o.open && use != UseBranch && use != UseShape {
		return UseNone, false // its other use is not known: only a test or a size decides
	}
	return use, found
}

// enclosingFunction is the function definition around n; nil at module level.
func enclosingFunction(n *sitter.Node) *sitter.Node {
	for p := n.Parent(); p != nil; p = p.Parent() {
		if p.Kind() == "function_definition" {
			return p
		}
	}
	return nil
}

// formatted adds a value formatted into a string: shown when the string
// goes straight to a print or a logger, else the string's own use (an
// f-string's, through pyUse), else opaque.
func (f *placeFinder) formatted(pf *parsedFile, n *sitter.Node, what string, rd pyRead) {
	if displayedContext(f, pf, n) {
		f.add(pf, n, placeShown, DepFalse, CatLogging, what+" for display")
		return
	}
	if rd.kind == readFormat || rd.kind == readPercent {
		if use, ok := f.useOf(pf, n, rd, 0); ok {
			if dep, cat := useVerdict(use, placeShown); dep != DepUnknown {
				f.add(pf, n, placeShown, dep, cat, what+" "+useWords[use])
				return
			}
		}
	}
	f.opaque(pf, n, what+"; the string's use is not followed")
}

// displayedContext says whether the string built at n goes straight to a
// call that only shows it (print, a logger, a writer), or to the message
// of an exception raised or an assertion failed (`raise ValueError("bad
// %r" % v)`, `assert ok, f"{v}"`: the test was decided before the message
// was made).
func displayedContext(f *placeFinder, pf *parsedFile, n *sitter.Node) bool {
	for p := n.Parent(); p != nil; n, p = p, p.Parent() {
		switch p.Kind() {
		case "assert_statement":
			return p.NamedChildCount() > 1 && sameNode(p.NamedChild(1), n) // the message of an assertion failed
		case "parenthesized_expression", "binary_operator", "concatenated_string", "argument_list", "keyword_argument":
		case "call":
			if !sameNode(p.ChildByFieldName("arguments"), n) {
				return false
			}
			name, method := callNameOf(pf, p.ChildByFieldName("function"))
			if f.displays(pf, p, name, method) || raised(p) {
				return true // shown, or the message of an exception raised
			}
			if method || name != "str" && name != "format" && name != "repr" {
				return false
			}
		default:
			return false
		}
	}
	return false
}

// raised says whether call makes the exception a raise statement raises.
func raised(call *sitter.Node) bool {
	p := call.Parent()
	return p != nil && p.Kind() == "raise_statement" && sameNode(p.NamedChild(0), call)
}

// to adds a `.to(...)` of a value that may be a CUDA tensor: a copy to the
// host when its device is the CPU, nothing when it is a GPU or a dtype,
// opaque when the device is not known.
func (f *placeFinder) to(pf *parsedFile, call, args *sitter.Node) {
	for i := uint(0); i < args.NamedChildCount(); i++ {
		a := args.NamedChild(i)
		if a.Kind() == "keyword_argument" {
			key := a.ChildByFieldName("name")
			if key == nil || pf.text(key) != "device" {
				continue
			}
			a = a.ChildByFieldName("value")
		}
		switch dev := f.deviceOf(pf, a); dev {
		case "cpu":
			f.used(pf, call, placeCopy, pyRead{kind: readCopy}, "copies to the host (.to(cpu))")
			return
		case "?":
			f.opaque(pf, call, "moves a value that may be a CUDA tensor to a device not known (.to)")
			return
		}
	}
}

// deviceOf says what an argument of `.to` names: "cpu", "gpu", "" (not a
// device: a dtype, a flag) or "?" (not known).
func (f *placeFinder) deviceOf(pf *parsedFile, a *sitter.Node) string {
	if a == nil {
		return ""
	}
	switch a.Kind() {
	case "string":
		return literalDevice(pf.text(a))
	case "attribute", "true", "false", "none", "integer":
		if a.Kind() == "attribute" && !f.types.isModule(pf, a) {
			return "?" // self.device, args.device
		}
		return "" // torch.float16, non_blocking
	case "call":
		if name, _ := callNameOf(pf, a.ChildByFieldName("function")); name == "device" {
			if args := a.ChildByFieldName("arguments"); args != nil && args.NamedChildCount() > 0 {
				return f.deviceOf(pf, args.NamedChild(0))
			}
		}
		return "?"
	case "identifier":
		scope := bindingScope(pf, a, pf.text(a))
		if scope == nil {
			return "?"
		}
		dev := ""
		f.types.bindings(pf, scope, pf.text(a), func(v *sitter.Node, _ bool) {
			switch d := f.deviceOf(pf, v); {
			case v == nil || v.Kind() == "identifier" || d == "?" || d == "":
				dev = "?"
			case dev != "?" && (dev == "" || dev == d):
				dev = d
			default:
				dev = "?"
			}
		})
		if dev == "" {
			return "?"
		}
		return dev
	}
	return "?"
}

// literalDevice is the device a string literal names.
func literalDevice(s string) string {
	s = strings.Trim(strings.ToLower(s), `"'`)
	switch {
	case strings.HasPrefix(s, "cpu"):
		return "cpu"
	case strings.HasPrefix(s, "cuda"):
		return "gpu"
	}
	return "?"
}
