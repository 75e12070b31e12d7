package report

import (
	"github.com/nsyssync/nsyssync/contract"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/program"
)

// programOf is the analysis' program; an Analysis built without one
// (a literal) reads as unknown.
func (a *Analysis) programOf() program.Program {
	p := a.Program
	if p.Framework == "" {
		p.Framework = program.Unknown
	}
	if p.Language == "" {
		p.Language = program.UnknownLanguage
	}
	return p
}

// programText is the program in one line for the report headers:
// "OpenACC (C/C++/Fortran): NVHPC OpenACC kernels FUNC_LINE_gpu".
func (a *Analysis) programText() string {
	p := a.programOf()
	if why := p.Why(); why != "" {
		return p.Summary() + ": " + why
	}
	return p.Summary()
}

// programJSON is the program for the JSON contract.
func (a *Analysis) programJSON() contract.ProgramJSON {
	p := a.programOf()
	out := contract.ProgramJSON{Framework: string(p.Framework), Language: p.Language, Also: []string{}, Evidence: []string{}}
	for _, f := range p.Also {
		out.Also = append(out.Also, string(f))
	}
	for _, e := range p.Evidence {
		out.Evidence = append(out.Evidence, textsafe.Bound(e))
	}
	return out
}
