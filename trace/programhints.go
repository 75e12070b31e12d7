package trace

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// hintLoader reads the cheap hints package program decides from. It reads through the export's source.
type hintLoader struct{ *source }

// ProgramHints are the cheap facts of an export that tell what kind of
// program it profiled (package program reads them): a bounded sample of
// the export's strings, the language-model trace tables that hold rows,
// and the NVTX domains. Reading them costs a few small queries whatever
// the export's size.
type ProgramHints struct {
	// Strings are the first MaxHintStrings of StringIds, each clipped to
	// MaxHintString bytes: kernel, API, NVTX, thread and library names.
	Strings []string
	// Tables are the OpenACC, OpenMP and MPI trace tables (nsys -t
	// openacc, openmp, mpi) that hold rows, sorted. Older exports create
	// them empty, so a table counts only with a row.
	Tables []string
	// Domains are the NVTX domain names, sorted and distinct.
	Domains []string
	// Command is the command line nsys launched (META_DATA_CAPTURE's
	// PROCESS_0:COMMAND and its PROCESS_0:ARGUMENT_n in order), at most
	// MaxCommandArgs words of MaxHintString bytes; nil when the export does
	// not record it (before nsys 2023.4's schema 3.11).
	Command []string
}

// MaxCommandArgs bounds ProgramHints.Command.
const MaxCommandArgs = 64

// Bounds of ProgramHints.Strings.
const (
	MaxHintStrings = 20000
	MaxHintString  = 160
)

// hintTablePrefixes name the trace tables of programming models.
var hintTablePrefixes = []string{"CUPTI_ACTIVITY_KIND_OPENACC_", "CUPTI_ACTIVITY_KIND_OPENMP", "OPENMP_EVENT_KIND_", "MPI_"}

// loadProgramHints reads the ProgramHints; domains are loadDomains'.
func (ld hintLoader) loadProgramHints(ctx context.Context, domains map[domainKey]string) (ProgramHints, error) {
	var h ProgramHints
	seen := map[string]bool{}
	for _, d := range domains {
		if d != "" && !seen[d] {
			seen[d] = true
			h.Domains = append(h.Domains, d)
		}
	}
	sort.Strings(h.Domains)
	s := ld.Schema
	for _, name := range s.Tables() {
		if !hasHintPrefix(name) || strings.HasPrefix(name, "MPI_COMMUNICATORS") {
			continue
		}
		var one sql.NullInt64
		q := fmt.Sprintf(`SELECT 1 FROM "%s" LIMIT 1`, strings.ReplaceAll(s.Name(name), `"`, `""`))
		n, err := ld.scanRows(ctx, "reading "+name, q, []any{&one}, func() error { return nil })
		if err != nil {
			return h, err
		}
		if n > 0 {
			h.Tables = append(h.Tables, name)
		}
	}
	var err error
	if h.Command, err = ld.loadCommand(ctx); err != nil {
		return h, err
	}
	if !s.HasColumn(tableStrings, "value") {
		return h, nil
	}
	var text sql.NullString
	q := fmt.Sprintf(`SELECT substr(value, 1, %d) FROM %s LIMIT %d`, MaxHintString, s.Name(tableStrings), MaxHintStrings)
	_, err = ld.scanRows(ctx, "reading the export's strings", q, []any{&text}, func() error {
		if text.Valid && text.String != "" {
			h.Strings = append(h.Strings, text.String)
		}
		return nil
	})
	return h, err
}

func hasHintPrefix(table string) bool {
	for _, p := range hintTablePrefixes {
		if strings.HasPrefix(table, p) {
			return true
		}
	}
	return false
}

// loadCommand reads the launched command line from META_DATA_CAPTURE:
// PROCESS_0:COMMAND, then PROCESS_0:ARGUMENT_0, _1, … in numeric order
// (a missing argument ends it).
func (ld hintLoader) loadCommand(ctx context.Context) ([]string, error) {
	s := ld.Schema
	if !s.HasColumn(tableMetaCapture, "name") || !s.HasColumn(tableMetaCapture, "value") {
		return nil, nil
	}
	const command, argument = "PROCESS_0:COMMAND", "PROCESS_0:ARGUMENT_"
	var name, value sql.NullString
	q := fmt.Sprintf(`SELECT substr(name, 1, 40), substr(value, 1, %d) FROM %s WHERE name = '%s' OR name GLOB '%s[0-9]*' LIMIT %d`,
		MaxHintString, s.Name(tableMetaCapture), command, argument, 4*MaxCommandArgs)
	found := map[int]string{}
	_, err := ld.scanRows(ctx, "reading the captured command line", q, []any{&name, &value}, func() error {
		if !name.Valid || !value.Valid {
			return nil
		}
		if name.String == command {
			found[-1] = value.String
			return nil
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(name.String, argument)); err == nil && n >= 0 && n < MaxCommandArgs {
			found[n] = value.String
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	prog, ok := found[-1]
	if !ok || prog == "" {
		return nil, nil
	}
	out := []string{prog}
	for i := 0; ; i++ {
		a, ok := found[i]
		if !ok {
			break
		}
		out = append(out, a)
	}
	return out, nil
}
