package tracegen

import (
	"crypto/sha256"
	"database/sql"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"testing"
)

func corpusFile(t *testing.T, name string) string {
	t.Helper()
	p := filepath.Join(corpus, name)
	if _, err := os.Stat(p); err != nil {
		t.Skipf("real nsys exports not available at %s (CI keeps ../shared beside the repo): %v", corpus, err)
	}
	return p
}

func open(t *testing.T, path string) *sql.DB {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := sql.Open("sqlite", (&url.URL{Scheme: "file", Path: abs}).String()+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func fileSum(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func num(t *testing.T, db *sql.DB, q string) int64 {
	t.Helper()
	var n sql.NullInt64
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n.Int64
}

// digest hashes every row of table (in rowid order) that matches where.
func digest(t *testing.T, db *sql.DB, table, where string) string {
	t.Helper()
	rows, err := db.Query(fmt.Sprintf("SELECT * FROM %s %s ORDER BY rowid", quote(table), where))
	if err != nil {
		t.Fatalf("digest %s: %v", table, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	h := sha256.New()
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%#v\n", vals)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

func tableSet(t *testing.T, db *sql.DB) map[string]bool {
	t.Helper()
	rows, err := db.Query(`SELECT type || ' ' || name FROM sqlite_master`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	m := map[string]bool{}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		m[s] = true
	}
	return m
}

func hasCol(t *testing.T, db *sql.DB, table, col string) bool {
	return num(t, db, fmt.Sprintf("SELECT count(*) FROM pragma_table_info('%s') WHERE name = '%s'", table, col)) > 0
}

// withRows lists the tables, among those tracegen replicates, that have rows
// to replicate.
func withRows(t *testing.T, db *sql.DB) []string {
	t.Helper()
	var out []string
	for _, tbl := range replicated {
		if num(t, db, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '"+tbl+"'") == 0 {
			continue
		}
		where := ""
		if tbl == "NVTX_EVENTS" {
			where = " WHERE " + nvtxDefs
		}
		if num(t, db, "SELECT count(*) FROM "+tbl+where) > 0 {
			out = append(out, tbl)
		}
	}
	return out
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
