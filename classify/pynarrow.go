package classify

// Type narrowing: what the statements before a read of a variable, in the
// same function, show of its value there, whatever its other bindings
// say. The type questions of leangpu.go are flow insensitive (every value
// bound to a name anywhere in its function); a normalizer such as
//
//	if isinstance(v, torch.Tensor):
//	    v = v.item()
//	self.meters[k].update(v)
//
// hands on a Python number, and `x.item() if torch.is_tensor(x) else
// float(x)` converts no tensor in its second branch. Facts of Python:
//
//   - a branch taken when isinstance(v, T) holds, T Python scalar types
//     (int, float, bool, str, numbers.Number, NumPy's), sees no tensor;
//     a branch taken when `v is None` holds, none either;
//   - a branch taken when v is no torch.Tensor (isinstance false,
//     torch.is_tensor false) sees none, where the program imports no other
//     library of CUDA arrays (CuPy);
//   - after `v = <no tensor>`, after an if statement every path through
//     which binds v to no tensor, exits, or is taken only when v is none,
//     and after `assert isinstance(v, (int, float))`, v holds no tensor
//     until it is bound again.
//
// A read is narrowed only by statements of its own function before it in
// the blocks around it; a statement around the read that binds the name
// elsewhere (a loop that rebinds it after the read) undoes it.

import (
	"strings"

	sitter "github.com/tree-sitter/go-tree-sitter"
)

// narrowed says whether the statements before id, in its function, show
// that the variable name holds no CUDA tensor there.
func (g *gpuTyper) narrowed(pf *parsedFile, id *sitter.Node, name string) bool {
	scope := ownScope(pf, id, name)
	if scope == nil {
		return false
	}
	sites := pf.scopeIndex(scope).sites[name]
	binds := func(n *sitter.Node) bool {
		for _, at := range sites {
			if at >= n.StartByte() && at < n.EndByte() {
				return true
			}
		}
		return false
	}
	child := id
	for a := id.Parent(); a != nil; child, a = a, a.Parent() {
		switch a.Kind() {
		case "function_definition", "lambda", "class_definition", "module":
			return false
		case "conditional_expression":
			if a.NamedChildCount() == 3 {
				cond := a.NamedChild(1)
				if sameNode(child, a.NamedChild(0)) && g.proves(pf, cond, name, true) ||
					sameNode(child, a.NamedChild(2)) && g.proves(pf, cond, name, false) {
					return true
				}
			}
		case "boolean_operator":
			left, right := a.ChildByFieldName("left"), a.ChildByFieldName("right")
			if op := a.ChildByFieldName("operator"); op != nil && sameNode(child, right) {
				if pf.text(op) == "and" && g.proves(pf, left, name, true) || pf.text(op) == "or" && g.proves(pf, left, name, false) {
					return true
				}
			}
		case "if_statement":
			if g.guardedBranch(pf, a, child, name) && !binds(child) {
				return true
			}
		case "block":
			if binds(child) && child.Kind() != "expression_statement" {
				return false // a loop or branch around the read binds it again
			}
			for prev := child.PrevNamedSibling(); prev != nil; prev = prev.PrevNamedSibling() {
				if binds(prev) {
					return g.narrowingStatement(pf, prev, name, binds)
				}
				if g.exitGuard(pf, prev, name) {
					return true
				}
			}
		}
	}
	return false
}

// ownScope is the body of the innermost function around id when that
// function binds name or has it as a parameter; nil otherwise (a global,
// or a variable of an enclosing function).
func ownScope(pf *parsedFile, id *sitter.Node, name string) *sitter.Node {
	for p := id.Parent(); p != nil; p = p.Parent() {
		switch p.Kind() {
		case "lambda", "class_definition", "module":
			return nil
		case "function_definition":
			params, body := p.ChildByFieldName("parameters"), p.ChildByFieldName("body")
			if body == nil || inside(id, params) {
				return nil
			}
			ix := pf.scopeIndex(body)
			if ix.declared[name] || !ix.binds[name] && (params == nil || !declaresParam(pf.text, params, name)) {
				return nil
			}
			return body
		}
	}
	return nil
}

// guardedBranch says whether child, a branch of the if statement a, is
// taken only when name holds no tensor.
func (g *gpuTyper) guardedBranch(pf *parsedFile, a, child *sitter.Node, name string) bool {
	conds := []*sitter.Node{a.ChildByFieldName("condition")}
	if sameNode(child, a.ChildByFieldName("consequence")) {
		return g.proves(pf, conds[0], name, true)
	}
	for i := uint(0); i < a.NamedChildCount(); i++ {
		c := a.NamedChild(i)
		switch c.Kind() {
		case "elif_clause":
			cond := c.ChildByFieldName("condition")
			if sameNode(c, child) {
				return g.proves(pf, cond, name, true) || g.anyFalse(pf, conds, name)
			}
			conds = append(conds, cond)
		case "else_clause":
			if sameNode(c, child) {
				return g.anyFalse(pf, conds, name)
			}
		}
	}
	return false
}

// anyFalse says whether one of conds, found false, shows name holds no tensor.
func (g *gpuTyper) anyFalse(pf *parsedFile, conds []*sitter.Node, name string) bool {
	for _, c := range conds {
		if g.proves(pf, c, name, false) {
			return true
		}
	}
	return false
}

// narrowingStatement says whether the statement stmt, the last before a
// read to bind name, leaves no tensor in it.
func (g *gpuTyper) narrowingStatement(pf *parsedFile, stmt *sitter.Node, name string, binds func(*sitter.Node) bool) bool {
	switch stmt.Kind() {
	case "expression_statement":
		return g.plainAssignment(pf, stmt, name)
	case "if_statement":
	default:
		return false
	}
	var conds []*sitter.Node
	pathOK := func(body *sitter.Node, guarded bool) bool {
		switch {
		case body == nil:
			return guarded
		case exits(body):
			return true
		case !binds(body):
			return guarded
		}
		last := lastBinding(body, binds)
		return last != nil && g.plainAssignment(pf, last, name) && g.onlyPlainBindings(pf, body, name, binds)
	}
	cond := stmt.ChildByFieldName("condition")
	if !pathOK(stmt.ChildByFieldName("consequence"), g.proves(pf, cond, name, true)) {
		return false
	}
	conds = append(conds, cond)
	hasElse := false
	for i := uint(0); i < stmt.NamedChildCount(); i++ {
		c := stmt.NamedChild(i)
		switch c.Kind() {
		case "elif_clause":
			ec := c.ChildByFieldName("condition")
			if !pathOK(c.ChildByFieldName("consequence"), g.proves(pf, ec, name, true) || g.anyFalse(pf, conds, name)) {
				return false
			}
			conds = append(conds, ec)
		case "else_clause":
			hasElse = true
			if !pathOK(c.ChildByFieldName("body"), g.anyFalse(pf, conds, name)) {
				return false
			}
		}
	}
	return hasElse || g.anyFalse(pf, conds, name)
}

// lastBinding is the last statement of a block that binds the name.
func lastBinding(body *sitter.Node, binds func(*sitter.Node) bool) *sitter.Node {
	for i := int(body.NamedChildCount()) - 1; i >= 0; i-- {
		if s := body.NamedChild(uint(i)); binds(s) {
			return s
		}
	}
	return nil
}

// onlyPlainBindings says whether every statement of body that binds name
// is a plain assignment of no tensor to it.
func (g *gpuTyper) onlyPlainBindings(pf *parsedFile, body *sitter.Node, name string, binds func(*sitter.Node) bool) bool {
	for i := uint(0); i < body.NamedChildCount(); i++ {
		if s := body.NamedChild(i); binds(s) && !g.plainAssignment(pf, s, name) {
			return false
		}
	}
	return true
}

// plainAssignment says whether stmt is `name = value`, value no tensor.
func (g *gpuTyper) plainAssignment(pf *parsedFile, stmt *sitter.Node, name string) bool {
	if stmt.Kind() != "expression_statement" || stmt.NamedChildCount() != 1 {
		return false
	}
	as := stmt.NamedChild(0)
	if as.Kind() != "assignment" {
		return false
	}
	left, right := as.ChildByFieldName("left"), as.ChildByFieldName("right")
	return left != nil && right != nil && left.Kind() == "identifier" && pf.text(left) == name && !g.maybeGPU(pf, right)
}

// exits says whether a block's last statement leaves it for good (raise,
// return, continue, break).
func exits(body *sitter.Node) bool {
	if body == nil || body.NamedChildCount() == 0 {
		return false
	}
	switch body.NamedChild(body.NamedChildCount() - 1).Kind() {
	case "raise_statement", "return_statement", "continue_statement", "break_statement":
		return true
	}
	return false
}

// exitGuard says whether stmt, which binds nothing of name, lets the
// statements after it run only when name holds no tensor: `assert
// isinstance(v, float)`, `if not isinstance(v, (int, float)): raise ...`.
func (g *gpuTyper) exitGuard(pf *parsedFile, stmt *sitter.Node, name string) bool {
	switch stmt.Kind() {
	case "assert_statement":
		return stmt.NamedChildCount() > 0 && g.proves(pf, stmt.NamedChild(0), name, true)
	case "if_statement":
		if stmt.ChildByFieldName("alternative") != nil {
			return false
		}
		return exits(stmt.ChildByFieldName("consequence")) && g.proves(pf, stmt.ChildByFieldName("condition"), name, false)
	}
	return false
}

// proves says whether cond, found to be truth, shows that name holds no
// tensor.
func (g *gpuTyper) proves(pf *parsedFile, cond *sitter.Node, name string, truth bool) bool {
	if cond == nil {
		return false
	}
	switch cond.Kind() {
	case "parenthesized_expression":
		return cond.NamedChildCount() == 1 && g.proves(pf, cond.NamedChild(0), name, truth)
	case "not_operator":
		return g.proves(pf, cond.ChildByFieldName("argument"), name, !truth)
	case "boolean_operator":
		left, right, op := cond.ChildByFieldName("left"), cond.ChildByFieldName("right"), cond.ChildByFieldName("operator")
		if op == nil {
			return false
		}
		if and := pf.text(op) == "and"; and == truth {
			return g.proves(pf, left, name, truth) || g.proves(pf, right, name, truth) // both hold, or both fail
		}
		return g.proves(pf, left, name, truth) && g.proves(pf, right, name, truth)
	case "comparison_operator":
		return truth && isNoneTest(pf, cond, name, "is") || !truth && isNoneTest(pf, cond, name, "is not")
	case "call":
		return g.typeTestProves(pf, cond, name, truth)
	}
	return false
}

// isNoneTest says whether cond is `name <op> None`.
func isNoneTest(pf *parsedFile, cond *sitter.Node, name, op string) bool {
	if cond.NamedChildCount() != 2 {
		return false
	}
	left, right := cond.NamedChild(0), cond.NamedChild(1)
	if left.Kind() != "identifier" || pf.text(left) != name || right.Kind() != "none" {
		return false
	}
	between := pf.src[left.EndByte():right.StartByte()]
	return strings.Join(strings.Fields(string(between)), " ") == op
}
