package triage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sync"
	"testing"
)

// writerEnv and labelEnv make the test binary, re-executed by
// TestConcurrentWriterProcesses, record one run in the database at
// writerEnv under the label labelEnv, and exit.
const (
	writerEnv = "NSYSSYNC_TEST_DB_WRITER"
	labelEnv  = "NSYSSYNC_TEST_DB_LABEL"
)

// recordOneRun does what one `nsyssync batch --db` does to the database:
// open (creating and migrating it), begin a run, record a trace, finish.
func recordOneRun(ctx context.Context, path, label string) error {
	db, err := OpenDB(ctx, path)
	if err != nil {
		return err
	}
	defer db.Close()
	id, err := db.BeginRun(ctx, RunInfo{Label: label})
	if err != nil {
		return err
	}
	if err := db.AddResult(ctx, id, Result{Path: label + ".sqlite", Err: errors.New("not analysed")}); err != nil {
		return err
	}
	return db.FinishRun(ctx, id)
}

// checkRuns checks that the database holds exactly the runs labelled,
// each finished with its one trace, at the current schema version.
func checkRuns(t *testing.T, path string, labels []string) {
	t.Helper()
	db, err := OpenDBReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if db.Version() != SchemaVersion() {
		t.Errorf("%s: schema version %d, want %d", path, db.Version(), SchemaVersion())
	}
	runs, err := db.Runs(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range runs {
		got = append(got, r.Label)
		if r.Failed != 1 || r.Finished == "" {
			t.Errorf("%s: %+v, want one trace and finished", path, r)
		}
	}
	slices.Sort(got)
	want := slices.Sorted(slices.Values(labels))
	if !slices.Equal(got, want) {
		t.Errorf("%s: runs %v, want %v", path, got, want)
	}
}

// Writers that create one new database at once, each through its own
// *sql.DB (its own connection and file locks, as a process has), all
// record their run: none fails on "table runs already exists" or a lock.
func TestConcurrentWritersCreateOneDB(t *testing.T) {
	const trials, writers = 30, 4
	ctx := context.Background()
	for trial := range trials {
		path := filepath.Join(t.TempDir(), "new.db")
		start := make(chan struct{})
		errs := make([]error, writers)
		labels := make([]string, writers)
		var wg sync.WaitGroup
		for w := range writers {
			labels[w] = fmt.Sprintf("writer-%d", w)
			wg.Go(func() {
				<-start
				errs[w] = recordOneRun(ctx, path, labels[w])
			})
		}
		close(start)
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		checkRuns(t, path, labels)
	}
}

// The same with separate processes: the test binary re-executed.
func TestConcurrentWriterProcesses(t *testing.T) {
	if path := os.Getenv(writerEnv); path != "" {
		if err := recordOneRun(context.Background(), path, os.Getenv(labelEnv)); err != nil {
			t.Fatal(err)
		}
		return
	}
	const trials, writers = 6, 4
	for trial := range trials {
		path := filepath.Join(t.TempDir(), "new.db")
		var cmds []*exec.Cmd
		var labels []string
		for w := range writers {
			label := fmt.Sprintf("proc-%d", w)
			labels = append(labels, label)
			cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentWriterProcesses$", "-test.count=1")
			cmd.Env = append(os.Environ(), writerEnv+"="+path, labelEnv+"="+label)
			cmds = append(cmds, cmd)
		}
		outs := make([][]byte, writers)
		errs := make([]error, writers)
		var wg sync.WaitGroup
		for w, cmd := range cmds {
			wg.Go(func() { outs[w], errs[w] = cmd.CombinedOutput() })
		}
		wg.Wait()
		for w := range writers {
			if errs[w] != nil {
				t.Fatalf("trial %d, writer %d: %v\n%s", trial, w, errs[w], outs[w])
			}
		}
		checkRuns(t, path, labels)
	}
}
