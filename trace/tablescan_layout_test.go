package trace

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/nsyssync/nsyssync/internal/fixturegz"
)

// layoutVariant rebuilds a table of an export with the same rows in
// another physical layout.
type layoutVariant struct {
	name string
	// defs returns the new table's column definitions from the original
	// ones, and what follows the closing parenthesis.
	defs func(first string, cols []string) ([]string, string)
	// insert returns the INSERT … SELECT that copies the rows, given the
	// new table, the original and the quoted column list.
	insert func(table, orig, cols string) string
	// fromPages: the page reader must read the rebuilt tables itself.
	fromPages bool
}

var layoutVariants = []layoutVariant{
	{
		// A STORED generated column before the real ones takes the first
		// slot of every record; a VIRTUAL one between them takes none; a
		// second STORED one shifts the columns after it again.
		name: "generated columns",
		defs: func(first string, cols []string) ([]string, string) {
			defs := []string{fmt.Sprintf(`gen_first INTEGER GENERATED ALWAYS AS (%s + 7) STORED`, first)}
			defs = append(defs, cols[:2]...)
			defs = append(defs, fmt.Sprintf(`gen_virtual INTEGER GENERATED ALWAYS AS (%s * 2) VIRTUAL`, first),
				fmt.Sprintf(`gen_stored TEXT GENERATED ALWAYS AS ('x' || %s) STORED`, first))
			return append(defs, cols[2:]...), ""
		},
		insert: func(table, orig, cols string) string {
			return fmt.Sprintf(`INSERT INTO %s (rowid, %s) SELECT rowid, %s FROM %s ORDER BY rowid`, table, cols, cols, orig)
		},
		fromPages: true,
	},
	{
		// No rowid: the original rowid becomes the primary key, so that
		// the table's order is the original's.
		name: "without rowid",
		defs: func(_ string, cols []string) ([]string, string) {
			return append(cols, `orig_rowid INTEGER NOT NULL PRIMARY KEY`), " WITHOUT ROWID"
		},
		insert: func(table, orig, cols string) string {
			return fmt.Sprintf(`INSERT INTO %s (%s, orig_rowid) SELECT %s, rowid FROM %s`, table, cols, cols, orig)
		},
	},
}

// rebuildTables gives each table of a copied export the variant's layout,
// keeping its rows.
func rebuildTables(t *testing.T, path string, v layoutVariant, tables []string) {
	t.Helper()
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, table := range tables {
		rows, err := db.Query(`SELECT name, type, "notnull" FROM pragma_table_info(?)`, table)
		if err != nil {
			t.Fatal(err)
		}
		var defs, names []string
		for rows.Next() {
			var name, typ string
			var notNull bool
			if err := rows.Scan(&name, &typ, &notNull); err != nil {
				t.Fatal(err)
			}
			def := fmt.Sprintf(`"%s" %s`, name, typ)
			if notNull {
				def += " NOT NULL"
			}
			defs, names = append(defs, def), append(names, `"`+name+`"`)
		}
		rows.Close()
		if len(names) < 3 {
			t.Fatalf("%s: %d columns", table, len(names))
		}
		newDefs, tail := v.defs(names[0], defs)
		cols := strings.Join(names, ", ")
		orig := table + "_orig"
		for _, stmt := range []string{
			fmt.Sprintf(`ALTER TABLE %s RENAME TO %s`, table, orig),
			fmt.Sprintf("CREATE TABLE %s (\n\t%s\n)%s", table, strings.Join(newDefs, ",\n\t"), tail),
			v.insert(table, orig, cols),
			fmt.Sprintf(`DROP TABLE %s`, orig),
		} {
			if _, err := db.Exec(stmt); err != nil {
				t.Fatalf("%s: %v", stmt, err)
			}
		}
	}
	if _, err := db.Exec(`VACUUM`); err != nil {
		t.Fatal(err)
	}
}

// An export whose scanned tables carry generated columns (STORED before
// the real columns, VIRTUAL between them), or are WITHOUT ROWID, loads to
// the same trace as the original, by the page reader and through SQL:
// table_info hides generated columns, so the page reader used to read
// every column one slot off (0 syncs, exit 0), and the SQL path used to
// ask a WITHOUT ROWID table for its rowid (issue 14, item 8).
func TestLoadTableLayouts(t *testing.T) {
	fixture := fixturegz.Plain(t, "../fixtures", "syncs_backtrace") // copied and rebuilt below
	tables := []string{tableRuntime, tableSync, tableKernel, tableMemcpy, tableCudaEvent}
	want, err := loadWith(t, fixture, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(want.Syncs) == 0 {
		t.Fatal("the fixture has no syncs: the comparison proves nothing")
	}
	wantTimelines := timelinesOf(t, fixture, Interval{want.Region.Start, want.Region.End})
	for _, v := range layoutVariants {
		t.Run(v.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "export.sqlite")
			copyFile(t, fixture, path, -1)
			rebuildTables(t, path, v, tables)
			for _, sqlOnly := range []bool{false, true} {
				x, err := Open(context.Background(), path)
				if err != nil {
					t.Fatal(err)
				}
				x.src.sqlOnly = sqlOnly
				got, err := x.Load(context.Background(), LoadOptions{})
				if err != nil {
					x.Close()
					t.Fatalf("sqlOnly=%v: %v", sqlOnly, err)
				}
				for _, table := range tables {
					lay := x.src.layouts[x.Schema.Name(table)]
					if !sqlOnly && lay != nil && lay.ok != v.fromPages {
						t.Errorf("%s: read from the pages %v, want %v", table, lay.ok, v.fromPages)
					}
				}
				if !sqlOnly && v.fromPages && x.src.layouts[x.Schema.Name(tableRuntime)] == nil {
					t.Errorf("the API calls were not read through the page reader")
				}
				x.Close()
				if len(got.Syncs) != len(want.Syncs) {
					t.Fatalf("sqlOnly=%v: %d syncs, the original %d", sqlOnly, len(got.Syncs), len(want.Syncs))
				}
				for i := range got.Syncs {
					if !reflect.DeepEqual(got.Syncs[i], want.Syncs[i]) {
						t.Fatalf("sqlOnly=%v: sync %d differs:\n got %+v\nwant %+v", sqlOnly, i, got.Syncs[i], want.Syncs[i])
					}
				}
				if got.Stats != want.Stats || !reflect.DeepEqual(got.Region, want.Region) || !reflect.DeepEqual(got.Evidence, want.Evidence) {
					t.Errorf("sqlOnly=%v: stats, region or evidence differ:\n got %+v %+v %+v\nwant %+v %+v %+v", sqlOnly,
						got.Stats, got.Region, got.Evidence, want.Stats, want.Region, want.Evidence)
				}
			}
			if got := timelinesOf(t, path, Interval{want.Region.Start, want.Region.End}); !reflect.DeepEqual(got, wantTimelines) {
				t.Errorf("the timelines differ from the original's")
			}
		})
	}
}

// timelinesOf reads three windows of the region by overlap, and by start
// where the tables allow it (a WITHOUT ROWID table cannot be searched by
// rowid: ErrNotStartOrdered, and the caller reads by overlap).
func timelinesOf(t *testing.T, path string, r Interval) []*Timeline {
	t.Helper()
	x, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	third := (r.End - r.Start) / 3
	windows := []Interval{{r.Start, r.Start + third}, {r.Start + third, r.End - third/2}, {r.Start + third/3, r.End}}
	ctx := context.Background()
	if _, err := x.TimelinesByStart(ctx, windows); err != nil && !errors.Is(err, ErrNotStartOrdered) {
		t.Fatalf("%s: by start: %v", path, err)
	}
	if n, err := x.TimelineRows(ctx, windows); err != nil || n <= 0 {
		t.Fatalf("%s: timeline rows %d, %v", path, n, err)
	}
	tls, err := x.Timelines(ctx, windows)
	if err != nil {
		t.Fatalf("%s: timelines: %v", path, err)
	}
	return tls
}
