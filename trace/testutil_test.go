package trace

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// corpusDir is the shared corpus of real exports beside the repository.
const corpusDir = "../../shared/corpus"

func corpusFiles(t *testing.T) []string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(corpusDir, "*.sqlite"))
	if len(files) == 0 {
		t.Skipf("no shared corpus at %s (it sits beside the repository in CI)", corpusDir)
	}
	return files
}

func loadFile(t *testing.T, path string, opt LoadOptions) *Trace {
	t.Helper()
	_, tr := openLoaded(t, path, opt)
	return tr
}

// openLoaded opens and loads an export, closing it when the test ends.
func openLoaded(t *testing.T, path string, opt LoadOptions) (*Export, *Trace) {
	t.Helper()
	x, err := Open(context.Background(), path)
	if err != nil {
		t.Fatalf("Open(%s): %v", path, err)
	}
	t.Cleanup(func() { x.Close() })
	tr, err := x.Load(context.Background(), opt)
	if err != nil {
		t.Fatalf("Load(%s): %v", path, err)
	}
	return x, tr
}

func fileDigest(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

// rawDB opens a file with plain SQLite for the tests' own, independent
// queries; a gzipped fixture is decompressed first.
func rawDB(t *testing.T, path string) *sql.DB {
	t.Helper()
	if strings.HasSuffix(path, ".gz") {
		path = fixturegz.Gunzip(t, path, t.TempDir())
	}
	abs, _ := filepath.Abs(path)
	db, err := sql.Open("sqlite", "file:"+abs+"?mode=ro&immutable=1")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func queryInt(t *testing.T, db *sql.DB, q string) int {
	t.Helper()
	var n int
	if err := db.QueryRow(q).Scan(&n); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return n
}

func hasTable(t *testing.T, db *sql.DB, name string) bool {
	return queryInt(t, db, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name='"+name+"'") > 0
}

func hasColumn(t *testing.T, db *sql.DB, table, col string) bool {
	return queryInt(t, db, "SELECT count(*) FROM pragma_table_info('"+table+"') WHERE name='"+col+"'") > 0
}

func t0() context.Context { return context.Background() }

func sqlf(format string, args ...any) string { return fmt.Sprintf(format, args...) }
