package report

import (
	"strconv"
	"unicode/utf8"

	"github.com/nsyssync/nsyssync/internal/textsafe"
	"github.com/nsyssync/nsyssync/trace"
)

// appendSyncJSON appends the JSON of one sync to b: the bytes that
// json.Marshal(syncJSON(t, s, site)) gives, where thread is the name of
// the sync's thread, written without reflection or an allocation per sync.
func appendSyncJSON(b []byte, s *trace.Sync, site, thread string) []byte {
	b = append(b, `{"id":"e`...)
	b = strconv.AppendInt(b, int64(s.Index)+1, 10)
	b = appendJSONString(append(b, `","site":`...), site)
	b = appendJSONString(append(b, `,"kind":`...), s.Kind.String())
	b = appendJSONString(append(b, `,"reason":`...), s.Reason.String())
	b = append(b, `,"apis":[`...)
	for i, c := range s.Calls() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, textsafe.Bound(c.Name))
	}
	b = appendInt(append(b, `],"pid":`...), s.GlobalTid.Pid())
	b = appendInt(append(b, `,"tid":`...), s.GlobalTid.Tid())
	if thread != "" {
		b = appendJSONString(append(b, `,"thread":`...), thread)
	}
	b = appendInt(append(b, `,"start_ns":`...), s.Start)
	b = appendInt(append(b, `,"end_ns":`...), s.End)
	b = appendInt(append(b, `,"blocked_ns":`...), s.Duration())
	b = appendJSONString(append(b, `,"scope":`...), s.Scope.String())
	b = appendOptInt(append(b, `,"device":`...), int64(s.Device), s.Device >= 0)
	if s.Context >= 0 {
		b = appendInt(append(b, `,"context":`...), int64(s.Context))
	}
	if s.EventID >= 0 && s.EventID != 0xFFFFFFFF {
		b = appendInt(append(b, `,"event":`...), s.EventID)
	}
	b = appendOptInt(append(b, `,"stream":`...), int64(s.Stream), s.Stream >= 0)
	if s.Legacy {
		b = append(b, `,"legacy_stream":true`...)
	}
	b = strconv.AppendBool(append(b, `,"resolved":`...), s.Resolved)
	if c := s.Copy; c != nil {
		b = appendJSONString(append(b, `,"copy":{"direction":`...), DirectionName(c))
		b = appendJSONString(append(b, `,"src":`...), MemName(c.SrcKind))
		b = appendJSONString(append(b, `,"dst":`...), MemName(c.DstKind))
		b = append(appendInt(append(b, `,"bytes":`...), c.Bytes), '}')
	}
	b = appendInt(append(b, `,"waited_for":{"ops":`...), int64(s.Waited.Ops))
	b = appendInt(append(b, `,"busy_ns":`...), s.Waited.BusyNs)
	if s.Waited.LastEnd != 0 {
		b = appendInt(append(b, `,"last_end_ns":`...), s.Waited.LastEnd)
	}
	b = strconv.AppendBool(append(b, `},"gpu_gap":{"device_busy":`...), s.Gap.DeviceBusy)
	b = appendInt(append(b, `,"idle_before_ns":`...), s.Gap.IdleBeforeNs)
	b = appendInt(append(b, `,"idle_after_ns":`...), s.Gap.IdleAfterNs)
	b = append(b, `},"nvtx":[`...)
	for i, r := range s.NVTX() {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, textsafe.Bound(r.Name))
	}
	return append(b, "]}"...)
}

func appendInt(b []byte, n int64) []byte { return strconv.AppendInt(b, n, 10) }

// appendOptInt appends n, or null when it is not set.
func appendOptInt(b []byte, n int64, set bool) []byte {
	if !set {
		return append(b, "null"...)
	}
	return strconv.AppendInt(b, n, 10)
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends s as a JSON string exactly as encoding/json
// writes it: HTML-safe (<, > and & as \u003c, \u003e, \u0026), U+2028 and
// U+2029 escaped, invalid UTF-8 as \ufffd.
func appendJSONString[S ~string | ~[]byte](b []byte, s S) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c >= ' ' && c != '"' && c != '\\' && c != '<' && c != '>' && c != '&' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(string(s[i:min(i+utf8.UTFMax, len(s))]))
		if r == utf8.RuneError && size == 1 {
			b = append(append(b, s[start:i]...), `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(append(b, s[start:i]...), '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	return append(append(b, s[start:]...), '"')
}
