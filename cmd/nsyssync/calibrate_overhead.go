package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/nsyssync/nsyssync/cuda"
	"github.com/nsyssync/nsyssync/estimate"
	"github.com/nsyssync/nsyssync/whatif"
)

// defaultNsysFlags capture CUDA and NVTX without CPU sampling or
// scheduling: the lean capture of docs/classifier.md.
const defaultNsysFlags = "-t cuda,nvtx -s none --cpuctxsw=none"

// overheadRun is the profiler-overhead measurement: the call-cost
// workload run as this program's child without the profiler, under nsys,
// and without again.
type overheadRun struct {
	nsys      string   // resolved path of nsys
	version   string   // its first line of --version
	flags     []string // nsys profile's capture flags
	calls     int
	device    int
	plain     []*cuda.CallCosts
	profiled  *cuda.CallCosts
	overheads whatif.Overheads
	none      []whatif.OverheadKind // kinds the profiler did not slow
}

// findNsys resolves the nsys command and reads its version, before any
// GPU work: a missing nsys is said at once.
func findNsys(ctx context.Context, name, flags string) (*overheadRun, error) {
	path, err := exec.LookPath(name)
	if err != nil {
		return nil, fmt.Errorf("--profiler-overhead needs Nsight Systems: %w (give its path with --nsys)", err)
	}
	out, err := exec.CommandContext(ctx, path, "--version").Output()
	if err != nil {
		return nil, fmt.Errorf("%s --version: %w", path, err)
	}
	version, _, _ := strings.Cut(strings.TrimSpace(string(out)), "\n")
	return &overheadRun{nsys: path, version: version, flags: strings.Fields(flags)}, nil
}

// measure runs the workload plain, profiled, plain, each in a child
// process of this program (so that the three start alike), and keeps the
// difference per kind.
func (r *overheadRun) measure(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return fmt.Errorf("finding this program to run its workload: %w", err)
	}
	dir, err := os.MkdirTemp("", "nsyssync-overhead-")
	if err != nil {
		return fmt.Errorf("a folder for the profiled run: %w", err)
	}
	defer os.RemoveAll(dir)
	for i, profiled := range []bool{false, true, false} {
		result := filepath.Join(dir, fmt.Sprintf("costs%d.json", i))
		args := []string{exe, "calibrate", "--call-costs", "--calls", strconv.Itoa(r.calls),
			"--device", strconv.Itoa(r.device), "-o", result}
		if profiled {
			args = append(append(append([]string{r.nsys, "profile"}, r.flags...),
				"--force-overwrite=true", "-o", filepath.Join(dir, "overhead")), args...)
		}
		c, err := runCallCosts(ctx, args, result)
		if err != nil {
			return err
		}
		if profiled {
			r.profiled = c
		} else {
			r.plain = append(r.plain, c)
		}
	}
	r.overheads, r.none = cuda.ProfilerOverheads(r.profiled, r.plain...)
	return nil
}

// runCallCosts runs one child and reads the costs it wrote.
func runCallCosts(ctx context.Context, args []string, result string) (*cuda.CallCosts, error) {
	cmd := exec.CommandContext(ctx, args[0], args[1:]...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = io.Discard, &stderr
	runErr := cmd.Run()
	// The workload writes its result only once it has measured everything;
	// nsys may still fail after that (writing its own report), which does
	// not matter here.
	b, err := os.ReadFile(result)
	if err != nil {
		if runErr != nil {
			return nil, fmt.Errorf("running %s: %w%s", filepath.Base(args[0]), runErr, lastLine(stderr.String()))
		}
		return nil, fmt.Errorf("%s wrote no call costs: %w%s", filepath.Base(args[0]), err, lastLine(stderr.String()))
	}
	var c cuda.CallCosts
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("reading the call costs of %s: %w", filepath.Base(args[0]), err)
	}
	return &c, nil
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	if l := strings.TrimSpace(lines[len(lines)-1]); l != "" {
		return ": " + l
	}
	return ""
}

// into writes the overheads into a calibration profile: per kind, the
// flat value as their median, and where they come from.
func (r *overheadRun) into(p *estimate.Calibration) {
	p.ProfilerOverheads = estimate.ProfilerOverheadsOf(r.overheads)
	p.ProfilerOverheadNs = whatif.Median(slices.Clone(r.overheads[:]), whatif.MeanOfMiddles)
	p.Source += fmt.Sprintf("; profiler overhead: %s, `nsys profile %s`, %d calls a kind, profiled against two plain runs",
		r.version, strings.Join(r.flags, " "), r.profiled.Calls)
}

func (r *overheadRun) writeText(w io.Writer) {
	fmt.Fprintf(w, "\nProfiler overhead per call (%s, nsys profile %s; %d calls a kind):\n", r.version, strings.Join(r.flags, " "), r.profiled.Calls)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kind\tplain\tprofiled\tplain again\toverhead\n")
	for k := range whatif.NumOverheadKinds {
		note := ""
		if slices.Contains(r.none, k) {
			note = " (not slowed: kept as 1 ns)"
		}
		fmt.Fprintf(tw, "%s\t%.2f µs\t%.2f µs\t%.2f µs\t%.2f µs%s\n", k, r.plain[0].PerCallNs[k]/1e3, r.profiled.PerCallNs[k]/1e3,
			r.plain[1].PerCallNs[k]/1e3, float64(r.overheads[k])/1e3, note)
	}
	tw.Flush()
}

// runCallCostsOnly is the child of --profiler-overhead: it measures the
// call costs on this process's GPU and writes them as JSON.
func runCallCostsOnly(ctx context.Context, opt calibrateOptions, stdout io.Writer) error {
	out, err := openOutput(ctx, opt.output, stdout, nil)
	if err != nil {
		return err
	}
	defer out.abort()
	dev, err := openGPU(opt.device)
	if err != nil {
		return err
	}
	defer dev.Close()
	c, err := dev.MeasureCallCosts(ctx, opt.calls)
	if err != nil {
		return whileDoing(ctx, err, "while timing driver calls")
	}
	b, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("encoding the call costs: %w", err)
	}
	if _, err := out.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("writing the call costs: %w", err)
	}
	return out.commit()
}
