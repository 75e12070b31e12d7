package report

import (
	"bufio"
	"encoding/json"
	"strconv"
	"strings"

	"github.com/nsyssync/nsyssync/classify"
	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/trace"
)

// The trace's events are written by hand into one reused buffer: the bytes
// json.Marshal gives for a chromeEvent whose Args map holds the same
// values (keys sorted, as encoding/json sorts a map's), without a map, a
// reflection walk or an allocation per event.

// eventWriter writes comma-separated events and keeps the first error.
type eventWriter struct {
	w   *bufio.Writer
	n   int
	err error
	buf []byte
	tmp []byte // an arg's text before it is escaped
}

// add writes one event through encoding/json (the few metadata events).
func (e *eventWriter) add(ev chromeEvent) {
	if e.err != nil {
		return
	}
	data, err := json.Marshal(ev)
	if err != nil {
		e.err = err
		return
	}
	e.buf = append(e.separator(e.buf[:0]), data...)
	e.flush()
}

// separator starts the next event of the list.
func (e *eventWriter) separator(b []byte) []byte {
	if e.n > 0 {
		b = append(b, ',')
	}
	return append(b, '\n')
}

// open starts an event in e.buf, up to `{"name":`; the caller appends
// the name, a JSON string.
func (e *eventWriter) open() []byte {
	return append(e.separator(e.buf[:0]), `{"name":`...)
}

// complete goes on with a complete ("ph":"X") event after its name, up to
// and with `"args":{`; the caller appends the args, sorted by key, and
// calls end.
func complete(b []byte, cat string, ts, dur, pid, tid int64) []byte {
	if cat != "" {
		b = appendJSONString(append(b, `,"cat":`...), cat)
	}
	b = appendUsec(append(b, `,"ph":"X","ts":`...), ts)
	b = appendUsec(append(b, `,"dur":`...), dur)
	b = appendInt(append(b, `,"pid":`...), pid)
	b = appendInt(append(b, `,"tid":`...), tid)
	return append(b, `,"args":{`...)
}

// end closes the args and the event, and writes it.
func (e *eventWriter) end(b []byte) {
	e.buf = append(b, "}}"...)
	e.flush()
}

func (e *eventWriter) flush() {
	if e.err != nil {
		return
	}
	if _, err := e.w.Write(e.buf); err != nil {
		e.err = err
	}
	e.n++
}

// appendUsec appends nanoseconds as microseconds with nanosecond
// precision. The magnitude is taken in uint64, where -math.MinInt64
// exists: a fuzzed export with a call at the start of time once gave
// "--9223372036854775.-808".
func appendUsec(b []byte, ns int64) []byte {
	abs := uint64(ns)
	if ns < 0 {
		b, abs = append(b, '-'), -abs
	}
	b = strconv.AppendUint(b, abs/1000, 10)
	frac := abs % 1000
	return append(b, '.', byte('0'+frac/100), byte('0'+frac/10%10), byte('0'+frac%10))
}

// usec formats nanoseconds as appendUsec does.
func usec(ns int64) json.Number { return json.Number(appendUsec(nil, ns)) }

// perfettoSite holds a site's share of its syncs' events, encoded once:
// the args between and around the sync's own, in key order.
type perfettoSite struct {
	name    []byte // the rest of the sync event's name after its id, quote included
	allowed []byte // `"allowed":…,` or empty
	verdict []byte // `"category":…` through `"fix":…,`
	where   []byte // `"location":…` through `"site_estimated_savings_ns":…,`
	bubble  []byte // `"dependency":…,` of the idle-time event
	site    []byte // `"site":…,`
}

func (a *Analysis) perfettoSite(s *classify.Site) (perfettoSite, error) {
	var p perfettoSite
	inner := appendJSONString(nil, " "+s.ID+": "+string(s.Dependency)+" "+textsafe.Bound(s.Category))
	p.name = inner[1:]
	if reason, ok := a.Allowed[s.ID]; ok {
		p.allowed = append(appendJSONString([]byte(`"allowed":`), textsafe.Bound(reason)), ',')
	}
	confidence, err := json.Marshal(s.Confidence)
	b := appendJSONString([]byte(`"category":`), textsafe.Bound(s.Category))
	b = append(append(b, `,"confidence":`...), confidence...)
	dep := appendJSONString([]byte(`"dependency":`), string(s.Dependency))
	b = append(append(b, ','), dep...)
	if len(s.Evidence) > 0 {
		b = appendJSONString(append(b, `,"evidence":`...), textsafe.Bound(strings.Join(s.Evidence, "; ")))
	}
	b = appendJSONString(append(b, `,"fingerprint":`...), classify.Fingerprint(s))
	if s.Fix != "" {
		b = appendJSONString(append(b, `,"fix":`...), textsafe.Bound(s.Fix))
	}
	p.verdict = append(b, ',')
	p.site = append(appendJSONString([]byte(`"site":`), s.ID), ',')
	b = appendJSONString([]byte(`"location":`), textsafe.Bound(siteLabel(s)))
	b = append(append(b, ','), p.site...)
	if a.Estimated() {
		b = append(appendInt(append(b, `"site_estimated_savings_ns":`...), a.SavingsNs(s)), ',')
	}
	p.where = b
	p.bubble = append(dep, ',')
	return p, err
}

// syncEvent writes a sync's event on its process's "host syncs" track and,
// when the GPU then idled, the idle time on its device's track.
func (e *eventWriter) syncEvent(s *trace.Sync, i int, p *perfettoSite) {
	if e.err != nil {
		return
	}
	b := append(appendID(e.open(), i), p.name...)
	b = complete(b, "sync", s.Start, s.Duration(), s.GlobalPid.Pid(), perfettoSyncTid)
	b = append(b, p.allowed...)
	b = append(appendInt(append(b, `"blocked_ns":`...), s.Duration()), ',')
	b = append(b, p.verdict...)
	e.tmp = appendIdleAfter(e.tmp[:0], s)
	b = append(appendJSONString(append(b, `"gpu_idle_after":`...), e.tmp), ',')
	b = append(b, p.where...)
	b = append(appendID(append(b, `"sync":`...), i), '"', ',')
	b = append(appendInt(append(b, `"thread":`...), s.GlobalTid.Tid()), ',')
	e.tmp = appendWaited(e.tmp[:0], s)
	b = append(appendJSONString(append(b, `"waited_for":`...), e.tmp), ',')
	e.tmp = appendWhat(e.tmp[:0], s)
	b = appendJSONString(append(b, `"what":`...), e.tmp)
	e.end(b)
	if s.Gap.DeviceBusy || s.Gap.IdleAfterNs <= 0 || s.Device < 0 {
		return
	}
	b = append(appendInt(append(e.open(), `"GPU idle after e`...), int64(i)+1), '"')
	b = complete(b, "bubble", s.End, s.Gap.IdleAfterNs, perfettoGPUPidBase+int64(s.Device), perfettoBubbleTid)
	b = append(b, p.bubble...)
	b = append(appendInt(append(b, `"idle_ns":`...), s.Gap.IdleAfterNs), ',')
	b = append(b, p.site...)
	b = append(appendID(append(b, `"sync":`...), i), '"')
	e.end(b)
}

// appendID appends the opening quote and the id of sync i, "e1" for the
// first, and no closing quote.
func appendID(b []byte, i int) []byte {
	return appendInt(append(b, `"e`...), int64(i)+1)
}
