package sqlitefile

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
)

// FuzzScan reads damaged databases: whatever the bytes, every table of
// every root page either scans or fails with an error, and never panics
// or loops.
func FuzzScan(f *testing.F) {
	path := filepath.Join(f.TempDir(), "seed.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		f.Fatal(err)
	}
	for _, q := range []string{
		"PRAGMA page_size = 512",
		"CREATE TABLE t (a INTEGER, b TEXT, c REAL)",
		"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 300) INSERT INTO t SELECT i * 1000003, printf('%0*d', i % 700, i), i / 3.0 FROM n",
	} {
		if _, err := db.Exec(q); err != nil {
			f.Fatal(err)
		}
	}
	db.Close()
	seed, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	f.Add(seed[:len(seed)/2])
	broken := bytes.Clone(seed)
	for i := 512; i < len(broken); i += 97 {
		broken[i] ^= 0x5a
	}
	f.Add(broken)
	f.Fuzz(func(t *testing.T, data []byte) {
		file, err := newFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		dst := make([]sql.NullInt64, 4)
		for root := uint32(1); root <= min(file.Pages(), 8); root++ {
			parts, err := file.Parts(root, 3)
			if err != nil {
				continue
			}
			for _, p := range parts {
				file.Scan(context.Background(), p, []int{0, 1, 2, Rowid}, func([]Value) error { return nil })
				file.ScanInts(context.Background(), p, []int{2, Rowid, 0, Absent}, dst, func() error { return nil })
			}
		}
	})
}
