package trace

import (
	"encoding/binary"
	"strings"
	"testing"
)

// pythonBlob builds a --include-blobs Python backtrace payload with the
// given frames {function id, file id, line}.
func pythonBlob(frames [][3]int64) []byte {
	b := make([]byte, 32, 48+24*len(frames))
	binary.LittleEndian.PutUint64(b[24:32], 32) // data offset
	b = binary.LittleEndian.AppendUint64(b, 7)  // thread state id
	b = binary.LittleEndian.AppendUint32(b, 1)  // state
	b = binary.LittleEndian.AppendUint32(b, uint32(len(frames)))
	for _, f := range frames {
		b = binary.LittleEndian.AppendUint64(b, uint64(f[0]))
		b = binary.LittleEndian.AppendUint64(b, uint64(f[1]))
		b = binary.LittleEndian.AppendUint32(b, uint32(int32(f[2])))
		b = append(b, 0, 0, 0, 0)
	}
	return b
}

// FuzzPayloads feeds one text and one blob to the parsers of what an
// export spells out in text: Python backtrace payloads (JSON and binary),
// API names, NVTX range specs and schema versions. None may panic, and each keeps its own invariants.
func FuzzPayloads(f *testing.F) {
	good := [][3]int64{{14, 15, 42}, {24, 15, 7}}
	seeds := []struct {
		text string
		blob []byte
	}{
		{`{"PyBt":{"Frames":[{"Function":14,"File":15,"Line":42},{"Function":24,"File":15,"Line":7}]}}`, pythonBlob(good)},
		{`{"PyBt":{"Frames":[]},"Other":{"Frames":[{"Function":1}]}}`, pythonBlob(nil)},
		{`{"PyBt":{"Frames":[{"Function":"14","File":1e99,"Line":-1}]}}`, pythonBlob(good)[:60]},
		{`{"PyBt":`, []byte{}},
		{`cudaStreamSynchronize_v3020`, pythonBlob([][3]int64{{-1, 1 << 62, -1 << 31}})},
		{`cuMemcpyDtoHAsync_v2_ptsz`, nil},
		{`cudaMemcpyPeerAsync_v4000`, nil},
		{`step@Python Backtrace on CUDA`, nil},
		{`@domain`, nil},
		{`3.20.3`, nil},
		{`-9223372036854775808`, nil},
		{`99999999999999999999`, nil},
		{"na\u00efve \xff\xfe", nil},
	}
	for _, s := range seeds {
		f.Add(s.text, s.blob)
	}
	f.Fuzz(func(t *testing.T, text string, blob []byte) {
		if frames := decodeJSONFrames(text); frames != nil && len(frames) == 0 {
			t.Errorf("decodeJSONFrames gave an empty, non-nil list")
		}
		if frames := decodeBinaryFrames(blob); len(frames) > len(blob)/24 {
			t.Errorf("decodeBinaryFrames gave %d frames from %d bytes", len(frames), len(blob))
		}
		checkNames(t, text)
		checkRangeSpec(t, text)
		if versionLess(text, text) {
			t.Errorf("versionLess(%q, itself) is true", text)
		}
		if s := truncate(text, 40); len(s) > 40+len("…") {
			t.Errorf("truncate kept %d bytes", len(s))
		}
	})
}

// checkNames: name normalisation and classification agree on raw and
// normalised names, and never touch driver API names.
func checkNames(t *testing.T, name string) {
	n := NormalizeName(name)
	if k, kn := ClassifyName(name), ClassifyName(n); k != kn {
		t.Errorf("ClassifyName(%q) = %v, of its normal form %q = %v", name, k, n, kn)
	}
	if !strings.HasPrefix(name, "cuda") && n != name {
		t.Errorf("NormalizeName changed a non-runtime name %q to %q", name, n)
	}
	if !strings.HasPrefix(name, n) {
		t.Errorf("NormalizeName(%q) = %q is not a prefix", name, n)
	}
	_ = isAsyncName(name)
	_ = isPeerName(name)
	_ = directionFromName(name)
	_ = ClassifyName(name).String()
}

// checkRangeSpec: NAME@DOMAIN splits at the last '@' after the first byte
// and loses nothing but that '@'.
func checkRangeSpec(t *testing.T, spec string) {
	name, domain := ParseRangeSpec(spec)
	joined := name
	if strings.LastIndex(spec, "@") > 0 {
		joined += "@" + domain
	}
	if joined != spec {
		t.Errorf("ParseRangeSpec(%q) = %q, %q", spec, name, domain)
	}
}
