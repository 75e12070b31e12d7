// Command nsysgen makes large, realistic Nsight Systems SQLite exports for
// benchmarks by replicating a real, small one (see internal/tracegen).
//
//	nsysgen -src SMALL.sqlite -out BIG.sqlite -size 1GB
//	nsysgen -src SMALL.sqlite -out BIG.sqlite -copies 100
//
// Sizes take B, KB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB
// (powers of 1024). The source is only read. Exit status: 0 done, 1 failed,
// 2 bad usage.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/internal/tracegen"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("nsysgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	src := fs.String("src", "", "real nsys SQLite export to replicate (only read)")
	out := fs.String("out", "", "output file (replaced if it exists)")
	size := fs.String("size", "", "target output size, e.g. 1GB, 500MiB")
	copies := fs.Int("copies", 0, "number of copies of the trace, the original included")
	quiet := fs.Bool("q", false, "no progress lines")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: nsysgen -src SMALL.sqlite -out BIG.sqlite (-size 1GB | -copies N)\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *src == "" || *out == "" || (*size == "") == (*copies == 0) || fs.NArg() > 0 {
		fs.Usage()
		return 2
	}
	opt := tracegen.Options{Source: *src, Output: *out, Copies: *copies, Progress: stderr}
	if *quiet {
		opt.Progress = nil
	}
	if *size != "" {
		n, err := parseSize(*size)
		if err != nil {
			fmt.Fprintf(stderr, "nsysgen: -size: %v\n", err)
			return 2
		}
		opt.TargetBytes = n
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	res, err := tracegen.Generate(ctx, opt)
	if err != nil {
		fmt.Fprintf(stderr, "nsysgen: %v\n", err)
		return 1
	}
	fmt.Fprintf(stdout, "%s: %d copies, %d rows added, %d bytes, period %d ns\n",
		*out, res.Copies, res.Rows, res.Bytes, res.Period)
	return 0
}

// parseSize reads "1GB", "1.5 GiB", "4096" (bytes).
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := strings.IndexFunc(t, func(r rune) bool { return (r < '0' || r > '9') && r != '.' })
	num, unit := t, ""
	if i >= 0 {
		num, unit = t[:i], strings.ToUpper(strings.TrimSpace(t[i:]))
	}
	mult := map[string]float64{
		"": 1, "B": 1,
		"K": 1e3, "KB": 1e3, "M": 1e6, "MB": 1e6, "G": 1e9, "GB": 1e9, "T": 1e12, "TB": 1e12,
		"KIB": 1 << 10, "MIB": 1 << 20, "GIB": 1 << 30, "TIB": 1 << 40,
	}[unit]
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || mult == 0 || v <= 0 || v*mult >= math.MaxInt64 {
		return 0, fmt.Errorf("%q is not a size such as 1GB or 500MiB", s)
	}
	return int64(math.Ceil(v * mult)), nil
}
