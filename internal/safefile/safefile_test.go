package safefile

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

func write(t *testing.T, path, data string, perm fs.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), perm); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, perm); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// noTemp fails when a temporary file is left in dir.
func noTemp(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

func mkfifo(t *testing.T, path string) {
	t.Helper()
	if err := syscall.Mkfifo(path, 0o644); err != nil {
		t.Skipf("no FIFOs here: %v", err)
	}
}

// writeReport creates, writes and commits an output.
func writeReport(ctx context.Context, path string, inputs []string, text string) error {
	o, err := Create(ctx, path, inputs)
	if err != nil {
		return err
	}
	if _, err := io.WriteString(o, text); err != nil {
		o.Abort()
		return err
	}
	return o.Commit()
}

func TestCreateRegularFiles(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name string
		// setup makes the files of dir and returns the -o path and the inputs.
		setup func(t *testing.T, dir string) (out string, inputs []string)
		// check looks at dir after the report "new" was committed.
		check func(t *testing.T, dir string)
	}{
		{"new file", func(t *testing.T, dir string) (string, []string) {
			return filepath.Join(dir, "r.txt"), nil
		}, func(t *testing.T, dir string) {
			if read(t, filepath.Join(dir, "r.txt")) != "new" {
				t.Error("report not written")
			}
		}},
		{"existing file keeps its mode", func(t *testing.T, dir string) (string, []string) {
			p := filepath.Join(dir, "r.txt")
			write(t, p, "old", 0o600)
			return p, nil
		}, func(t *testing.T, dir string) {
			p := filepath.Join(dir, "r.txt")
			st, _ := os.Stat(p)
			if st.Mode().Perm() != 0o600 || read(t, p) != "new" {
				t.Errorf("mode %v, data %q; want 0600, new", st.Mode().Perm(), read(t, p))
			}
		}},
		{"group-writable file keeps its mode", func(t *testing.T, dir string) (string, []string) {
			p := filepath.Join(dir, "r.txt")
			write(t, p, "old", 0o664)
			return p, nil
		}, func(t *testing.T, dir string) {
			if st, _ := os.Stat(filepath.Join(dir, "r.txt")); st.Mode().Perm() != 0o664 {
				t.Errorf("mode %v, want 0664", st.Mode().Perm())
			}
		}},
		{"symlink is followed, not replaced", func(t *testing.T, dir string) (string, []string) {
			target := filepath.Join(dir, "target.txt")
			write(t, target, "old", 0o644)
			link := filepath.Join(dir, "link.txt")
			if err := os.Symlink("target.txt", link); err != nil {
				t.Fatal(err)
			}
			return link, nil
		}, func(t *testing.T, dir string) {
			link := filepath.Join(dir, "link.txt")
			st, _ := os.Lstat(link)
			if st.Mode()&fs.ModeSymlink == 0 {
				t.Error("the link was replaced by a file")
			}
			if read(t, filepath.Join(dir, "target.txt")) != "new" {
				t.Error("the link's target was not written")
			}
		}},
		{"dangling symlink writes its target", func(t *testing.T, dir string) (string, []string) {
			link := filepath.Join(dir, "link.txt")
			if err := os.Symlink("made.txt", link); err != nil {
				t.Fatal(err)
			}
			return link, nil
		}, func(t *testing.T, dir string) {
			if read(t, filepath.Join(dir, "made.txt")) != "new" {
				t.Error("the link's target was not created")
			}
			if st, _ := os.Lstat(filepath.Join(dir, "link.txt")); st.Mode()&fs.ModeSymlink == 0 {
				t.Error("the link was replaced")
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			out, inputs := tt.setup(t, dir)
			if err := writeReport(ctx, out, inputs, "new"); err != nil {
				t.Fatal(err)
			}
			tt.check(t, dir)
			noTemp(t, dir)
		})
	}
}

func TestCreateNewFileFollowsUmask(t *testing.T) {
	old := syscall.Umask(0o027)
	defer syscall.Umask(old)
	p := filepath.Join(t.TempDir(), "r.txt")
	if err := writeReport(context.Background(), p, nil, "x"); err != nil {
		t.Fatal(err)
	}
	if st, _ := os.Stat(p); st.Mode().Perm() != 0o640 {
		t.Errorf("mode %v, want 0640 (0666 less the umask 027)", st.Mode().Perm())
	}
}

func TestCreateRefusesInputs(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	in := filepath.Join(dir, "a.sqlite")
	write(t, in, "SQLite format 3\x00export", 0o644)
	link := filepath.Join(dir, "link.sqlite")
	if err := os.Symlink(in, link); err != nil {
		t.Fatal(err)
	}
	hard := filepath.Join(dir, "hard.sqlite")
	if err := os.Link(in, hard); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(dir, "b.sqlite")
	write(t, other, "other", 0o644)
	for _, tt := range []struct {
		name, out string
		inputs    []string
	}{
		{"the input itself", in, []string{in}},
		{"the input by another spelling", filepath.Join(dir, ".", "a.sqlite"), []string{in}},
		{"a symlink to the input", link, []string{in}},
		{"the input through a symlink", in, []string{link}},
		{"a hard link of the input", hard, []string{other, in}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			err := writeReport(ctx, tt.out, tt.inputs, "report")
			if !errors.Is(err, ErrIsInput) {
				t.Fatalf("err = %v, want ErrIsInput", err)
			}
			if !strings.Contains(err.Error(), tt.out) {
				t.Errorf("error %q does not name %s", err, tt.out)
			}
			if read(t, in) != "SQLite format 3\x00export" {
				t.Fatal("the input was changed")
			}
			if st, _ := os.Lstat(link); st.Mode()&fs.ModeSymlink == 0 {
				t.Fatal("the link was replaced")
			}
			noTemp(t, dir)
		})
	}
}

func TestCreateErrors(t *testing.T) {
	dir := t.TempDir()
	for _, tt := range []struct {
		name, out, want string
	}{
		{"missing directory", filepath.Join(dir, "missing", "r.txt"), "directory " + filepath.Join(dir, "missing") + " does not exist"},
		{"a directory", dir, "is a directory"},
		{"under a file", filepath.Join(dir, "f", "r.txt"), "not a directory"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			write(t, filepath.Join(dir, "f"), "x", 0o644)
			_, err := Create(context.Background(), tt.out, nil)
			if err == nil || !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), tt.out) {
				t.Fatalf("err = %v, want one naming %s and saying %q", err, tt.out, tt.want)
			}
			if strings.Contains(err.Error(), ".tmp") {
				t.Errorf("error names the temporary file: %v", err)
			}
		})
	}
}

func TestAbortKeepsTheOldFile(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "r.txt")
	write(t, p, "old", 0o644)
	o, err := Create(context.Background(), p, nil)
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(o, "half")
	o.Abort()
	o.Abort()
	if read(t, p) != "old" {
		t.Error("abort changed the file")
	}
	noTemp(t, dir)
}

func TestCreateSpecialFiles(t *testing.T) {
	t.Run("dev null stays a device", func(t *testing.T) {
		if err := writeReport(context.Background(), os.DevNull, nil, "report"); err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(os.DevNull)
		if err != nil || st.Mode()&fs.ModeCharDevice == 0 {
			t.Fatalf("%s is no longer a character device: %v %v", os.DevNull, st.Mode(), err)
		}
	})
	t.Run("FIFO is written, not renamed over", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "r.fifo")
		mkfifo(t, fifo)
		got := make(chan string, 1)
		go func() {
			f, err := os.Open(fifo)
			if err != nil {
				got <- err.Error()
				return
			}
			b, _ := io.ReadAll(f)
			f.Close()
			got <- string(b)
		}()
		if err := writeReport(context.Background(), fifo, nil, "report"); err != nil {
			t.Fatal(err)
		}
		if s := <-got; s != "report" {
			t.Errorf("reader got %q", s)
		}
		if st, _ := os.Lstat(fifo); st.Mode()&fs.ModeNamedPipe == 0 {
			t.Errorf("the FIFO became %v", st.Mode())
		}
	})
	t.Run("FIFO without a reader is interruptible", func(t *testing.T) {
		fifo := filepath.Join(t.TempDir(), "r.fifo")
		mkfifo(t, fifo)
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		defer cancel()
		start := time.Now()
		_, err := Create(ctx, fifo, nil)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want the context's", err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("took %v to give up", d)
		}
	})
}

func TestOpenRegular(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "a.sqlite")
	write(t, file, "data", 0o644)
	fifo := filepath.Join(dir, "f.sqlite")
	mkfifo(t, fifo)
	for _, tt := range []struct {
		path, want string
	}{
		{file, ""},
		{fifo, "is a FIFO (named pipe), not a regular file"},
		{dir, "is a directory, not a regular file"},
		{"/dev/zero", "is a character device, not a regular file"},
	} {
		start := time.Now()
		err := CheckRegular(tt.path)
		if time.Since(start) > 5*time.Second {
			t.Errorf("%s: took %v", tt.path, time.Since(start))
		}
		if tt.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tt.path, err)
			}
			continue
		}
		if !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), tt.want) || !strings.HasPrefix(err.Error(), tt.path) {
			t.Errorf("%s: err = %v, want %q", tt.path, err, tt.want)
		}
	}
}

func TestReadFileLimit(t *testing.T) {
	p := filepath.Join(t.TempDir(), "a.json")
	write(t, p, strings.Repeat("x", 100), 0o644)
	if b, err := ReadFile(p, 100); err != nil || len(b) != 100 {
		t.Errorf("at the limit: %d bytes, %v", len(b), err)
	}
	if _, err := ReadFile(p, 99); err == nil || !strings.Contains(err.Error(), "larger than 99 bytes") {
		t.Errorf("over the limit: %v", err)
	}
	if _, err := ReadFile("/dev/zero", 0); !errors.Is(err, ErrNotRegular) {
		t.Errorf("/dev/zero: %v", err)
	}
}
