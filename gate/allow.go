package gate

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/safefile"
	"github.com/nsyssync/nsyssync/report"
)

// DefaultAllowListFile is the allow-list the command reads from the
// current directory when --allow-list is not given.
const DefaultAllowListFile = ".nsyssync.yaml"

// AllowList names syncs that are known and accepted, so that they do not
// fail the CI gate. The file (YAML):
//
//	allow:
//	  - fingerprint: 1f0c2a9be4d7   # a site's "fingerprint" in the JSON report
//	    reason: warm-up, runs once
//	  - python: train.py:42          # FILE[:LINE]; FILE matches a path suffix
//	    reason: loss logged every 100 steps, on purpose
//	  - native: THPVariable_item     # a substring of a native frame's symbol
//	    reason: accepted until the loader is rewritten
//
// Each entry names exactly one of fingerprint, python or native, and gives
// a reason.
type AllowList struct {
	Path    string
	Entries []AllowEntry
}

// AllowEntry is one accepted site.
type AllowEntry struct {
	Fingerprint string `yaml:"fingerprint"`
	Python      string `yaml:"python"`
	Native      string `yaml:"native"`
	Reason      string `yaml:"reason"`
}

type allowFile struct {
	Allow []AllowEntry `yaml:"allow"`
}

// LoadAllowList reads and checks an allow-list file.
func LoadAllowList(path string) (*AllowList, error) {
	// An allow-list is a few kilobytes: 16 MiB bounds a wrong file named
	// (a FIFO or a device is refused at once).
	data, err := safefile.ReadFile(path, 16<<20)
	if err != nil {
		return nil, fmt.Errorf("reading the allow-list %s: %w", path, safefile.Problem(err))
	}
	return ParseAllowList(bytes.NewReader(data), path)
}

// ParseAllowList reads an allow-list; name is used in error messages.
// Unknown keys, entries without a reason and entries naming no site (or
// more than one kind of site) are errors.
func ParseAllowList(r io.Reader, name string) (*AllowList, error) {
	dec := yaml.NewDecoder(r)
	dec.KnownFields(true)
	var f allowFile
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%s: not a valid allow-list: %w", name, err)
	}
	for i, e := range f.Allow {
		kinds := 0
		for _, v := range []string{e.Fingerprint, e.Python, e.Native} {
			if strings.TrimSpace(v) != "" {
				kinds++
			}
		}
		if kinds != 1 {
			return nil, fmt.Errorf("%s: allow entry %d: name exactly one of fingerprint, python or native", name, i+1)
		}
		if strings.TrimSpace(e.Reason) == "" {
			return nil, fmt.Errorf("%s: allow entry %d: every entry needs a reason", name, i+1)
		}
		if e.Python != "" {
			if _, line := splitFileLine(e.Python); line < 0 {
				return nil, fmt.Errorf("%s: allow entry %d: python %q: the line is not a number", name, i+1, e.Python)
			}
		}
	}
	return &AllowList{Path: name, Entries: f.Allow}, nil
}

// Match returns the sites the allow-list accepts, by site ID, with the
// reason of the first entry that names each.
func (l *AllowList) Match(a *report.Analysis) map[string]string {
	out := map[string]string{}
	if l == nil {
		return out
	}
	for i := range a.Sites {
		s := &a.Sites[i]
		for _, e := range l.Entries {
			if e.matches(a, s) {
				out[s.ID] = e.Reason
				break
			}
		}
	}
	return out
}

func (e *AllowEntry) matches(a *report.Analysis, s *classify.Site) bool {
	switch {
	case e.Fingerprint != "":
		fp := strings.TrimSpace(e.Fingerprint)
		return strings.EqualFold(fp, classify.Fingerprint(s)) || strings.EqualFold(fp, classify.LegacyFingerprint(s))
	case e.Python != "":
		file, line := splitFileLine(strings.TrimSpace(e.Python))
		loc := s.Location
		if loc.File == "" || (line > 0 && loc.Line != line) {
			return false
		}
		return loc.File == file || strings.HasSuffix(loc.File, "/"+strings.TrimPrefix(file, "/"))
	case e.Native != "":
		return hasNativeFrame(a, s, strings.TrimSpace(e.Native))
	}
	return false
}

// hasNativeFrame reports whether a native frame of any of the site's syncs
// contains symbol.
func hasNativeFrame(a *report.Analysis, s *classify.Site, symbol string) bool {
	for _, i := range s.Syncs {
		if i < 0 || i >= len(a.Trace.Syncs) {
			continue
		}
		for _, f := range a.Trace.Syncs[i].Native() {
			if strings.Contains(f.Symbol, symbol) {
				return true
			}
		}
	}
	return false
}

// splitFileLine splits "train.py:42" into the file and the line; the line
// is 0 when absent and -1 when not a number.
func splitFileLine(spec string) (string, int64) {
	i := strings.LastIndex(spec, ":")
	if i < 0 {
		return spec, 0
	}
	line, err := strconv.ParseInt(spec[i+1:], 10, 64)
	if err != nil || line < 0 {
		return spec, -1
	}
	return spec[:i], line
}
