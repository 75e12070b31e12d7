package trace

import (
	"context"
	"database/sql"
	"fmt"
	"regexp"
	"sort"
	"strings"
)

// Table names of the nsys export schema read by this package.
const (
	tableStrings     = "StringIds"
	tableRuntime     = "CUPTI_ACTIVITY_KIND_RUNTIME"
	tableKernel      = "CUPTI_ACTIVITY_KIND_KERNEL"
	tableMemcpy      = "CUPTI_ACTIVITY_KIND_MEMCPY"
	tableMemset      = "CUPTI_ACTIVITY_KIND_MEMSET"
	tableGraphTrace  = "CUPTI_ACTIVITY_KIND_GRAPH_TRACE"
	tableSync        = "CUPTI_ACTIVITY_KIND_SYNCHRONIZATION"
	tableCudaEvent   = "CUPTI_ACTIVITY_KIND_CUDA_EVENT"
	tableCallchains  = "CUDA_CALLCHAINS"
	tableNVTX        = "NVTX_EVENTS"
	tableThreadNames = "ThreadNames"
	tableProcesses   = "PROCESSES"
	tableGPU         = "TARGET_INFO_GPU"
	tableStream      = "TARGET_INFO_CUDA_STREAM"
	tableContext     = "TARGET_INFO_CUDA_CONTEXT_INFO"
	tableNullStream  = "TARGET_INFO_CUDA_NULL_STREAM"
	tableCudaDevice  = "TARGET_INFO_CUDA_DEVICE"
	tableMetaNew     = "META_DATA_EXPORT"
	tableMetaOld     = "EXPORT_META_DATA"
	tableMetaCapture = "META_DATA_CAPTURE"
)

// Schema describes the tables and columns an export holds. Exports are lazy
// (a table exists only when it has rows) and columns come and go across
// nsys versions, so every reader asks the schema first.
type Schema struct {
	// NsysVersion and SchemaVersion come from META_DATA_EXPORT (2023.3+) or
	// EXPORT_META_DATA (2022.1–2023.2); older exports have neither.
	NsysVersion   string
	SchemaVersion string
	MetaTable     string

	tables  map[string]map[string]bool // resolved name -> column set
	alias   map[string]string          // canonical name -> actual name
	noRowid map[string]bool            // resolved names of WITHOUT ROWID tables
}

var versionedTable = regexp.MustCompile(`^(.*)_V[0-9]+$`)

func readSchema(ctx context.Context, db *sql.DB) (*Schema, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type = 'table'`)
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	sort.Strings(names)
	s := &Schema{tables: map[string]map[string]bool{}, alias: map[string]string{}}
	if s.noRowid, err = withoutRowid(ctx, db); err != nil {
		return nil, err
	}
	for _, n := range names {
		cols, err := tableColumns(ctx, db, n)
		if err != nil {
			return nil, err
		}
		s.tables[n] = cols
		s.alias[n] = n
	}
	// Defence against tools that rename tables with a version suffix
	// (NVTX_EVENTS_V2): the exact name wins, else the newest suffix.
	for _, n := range names {
		if m := versionedTable.FindStringSubmatch(n); m != nil {
			if _, exact := s.tables[m[1]]; !exact {
				s.alias[m[1]] = n
			}
		}
	}
	if err := s.readMeta(ctx, db); err != nil {
		return nil, err
	}
	return s, nil
}

// tableColumns returns a table's columns, generated columns included
// (table_xinfo's hidden is 2 for VIRTUAL and 3 for STORED ones; 1 marks
// the hidden columns of virtual tables, which are not the table's data).
func tableColumns(ctx context.Context, db *sql.DB, table string) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_xinfo(?) WHERE hidden IN (0, 2, 3)`, table)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	cols := map[string]bool{}
	for rows.Next() {
		var c string
		if err := rows.Scan(&c); err != nil {
			return nil, err
		}
		cols[c] = true
	}
	return cols, rows.Err()
}

// withoutRowid returns the tables declared WITHOUT ROWID: they have no
// rowid to split a scan by or to search, and their rows are not in the
// page layout the file reader knows.
func withoutRowid(ctx context.Context, db *sql.DB) (map[string]bool, error) {
	rows, err := db.QueryContext(ctx, `SELECT name FROM pragma_table_list WHERE schema = 'main' AND type = 'table' AND wr`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out[n] = true
	}
	return out, rows.Err()
}

func (s *Schema) readMeta(ctx context.Context, db *sql.DB) error {
	for _, t := range []string{tableMetaNew, tableMetaOld} {
		if !s.HasColumn(t, "name") || !s.HasColumn(t, "value") {
			continue
		}
		s.MetaTable = t
		q := fmt.Sprintf(`SELECT name, value FROM %s WHERE name IN ('EXPORT_PRODUCT_VERSION', 'EXPORT_SCHEMA_VERSION')`, s.Name(t))
		rows, err := db.QueryContext(ctx, q)
		if err != nil {
			return err
		}
		for rows.Next() {
			var name string
			var value sql.NullString
			if err := rows.Scan(&name, &value); err != nil {
				rows.Close()
				return err
			}
			if name == "EXPORT_PRODUCT_VERSION" {
				s.NsysVersion = value.String
			} else {
				s.SchemaVersion = value.String
			}
		}
		rows.Close()
		return rows.Err()
	}
	return nil
}

// Name returns the actual name of a canonical table (it may carry a
// version suffix), or the canonical name when the table is absent.
func (s *Schema) Name(table string) string {
	if n, ok := s.alias[table]; ok {
		return n
	}
	return table
}

// Has reports whether the export holds the table.
func (s *Schema) Has(table string) bool {
	_, ok := s.tables[s.Name(table)]
	return ok
}

// HasRowid reports whether the table has a rowid: false for a table
// declared WITHOUT ROWID, which readers then scan whole through SQL.
func (s *Schema) HasRowid(table string) bool {
	return !s.noRowid[s.Name(table)]
}

// HasColumn reports whether the table exists and has the column.
func (s *Schema) HasColumn(table, column string) bool {
	return s.tables[s.Name(table)][column]
}

// Tables lists the tables of the export, sorted.
func (s *Schema) Tables() []string {
	out := make([]string, 0, len(s.tables))
	for n := range s.tables {
		out = append(out, n)
	}
	sort.Strings(out)
	return out
}

// Version describes the export's origin in a few words for reports.
func (s *Schema) Version() string {
	switch {
	case s.NsysVersion != "" && s.SchemaVersion != "":
		return fmt.Sprintf("nsys %s (schema %s)", s.NsysVersion, s.SchemaVersion)
	case s.NsysVersion != "":
		return "nsys " + s.NsysVersion
	}
	return "nsys (version not recorded: export older than 2022.1)"
}

func (s *Schema) looksLikeNsys() bool {
	for n := range s.tables {
		if strings.HasPrefix(n, "CUPTI_ACTIVITY_KIND_") || strings.HasPrefix(n, "TARGET_INFO_") ||
			strings.HasPrefix(n, "NVTX_EVENTS") || n == "ThreadNames" || n == "ProcessStreams" || n == tableMetaNew || n == tableMetaOld {
			return true
		}
	}
	return false
}

// col returns the column expression when present, else the fallback SQL
// literal, so one query text serves every schema version.
func (s *Schema) col(table, column, fallback string) string {
	if s.HasColumn(table, column) {
		return `"` + column + `"`
	}
	return fallback
}
