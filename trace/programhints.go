package trace

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
)

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
}

// Bounds of ProgramHints.Strings.
const (
	MaxHintStrings = 20000
	MaxHintString  = 160
)

// hintTablePrefixes name the trace tables of programming models.
var hintTablePrefixes = []string{"CUPTI_ACTIVITY_KIND_OPENACC_", "CUPTI_ACTIVITY_KIND_OPENMP", "OPENMP_EVENT_KIND_", "MPI_"}

// loadProgramHints reads the ProgramHints; domains are loadDomains'.
func (x *Export) loadProgramHints(ctx context.Context, domains map[domainKey]string) (ProgramHints, error) {
	var h ProgramHints
	seen := map[string]bool{}
	for _, d := range domains {
		if d != "" && !seen[d] {
			seen[d] = true
			h.Domains = append(h.Domains, d)
		}
	}
	sort.Strings(h.Domains)
	s := x.Schema
	for _, name := range s.Tables() {
		if !hasHintPrefix(name) || strings.HasPrefix(name, "MPI_COMMUNICATORS") {
			continue
		}
		var one sql.NullInt64
		q := fmt.Sprintf(`SELECT 1 FROM "%s" LIMIT 1`, strings.ReplaceAll(s.Name(name), `"`, `""`))
		n, err := x.scanRows(ctx, "reading "+name, q, []any{&one}, func() error { return nil })
		if err != nil {
			return h, err
		}
		if n > 0 {
			h.Tables = append(h.Tables, name)
		}
	}
	if !s.HasColumn(tableStrings, "value") {
		return h, nil
	}
	var text sql.NullString
	q := fmt.Sprintf(`SELECT substr(value, 1, %d) FROM %s LIMIT %d`, MaxHintString, s.Name(tableStrings), MaxHintStrings)
	_, err := x.scanRows(ctx, "reading the export's strings", q, []any{&text}, func() error {
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
