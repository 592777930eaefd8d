package loader

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/valyala/fastjson"

	"github.com/compactbench/compactbench/internal/testutil"
)

// oracleLastWins is lastWinsTop (deep set) or lastWinsLazy (deep nil) as
// written before the walker skipped comparisons by keyBit: every key of an
// object (up to 256) is compared with every earlier one.
func oracleLastWins(v *fastjson.Value, deep map[string]bool) {
	if o := v.GetObject(); o != nil {
		var keys [][]byte
		var dups []string
		o.Visit(func(k []byte, x *fastjson.Value) {
			if len(keys) < 256 {
				for _, seen := range keys {
					if bytes.Equal(seen, k) {
						dups = append(dups, string(k))
						break
					}
				}
				keys = append(keys, k)
			}
			if deep != nil {
				if (x.GetObject() != nil || x.GetArray() != nil) && deep[string(k)] {
					oracleLastWins(x, nil)
				}
				return
			}
			oracleLastWins(x, nil)
		})
		for _, k := range dups {
			o.Del(k)
		}
		return
	}
	for _, x := range v.GetArray() {
		oracleLastWins(x, nil)
	}
}

// sameDedup fails t when lastWinsTop (and lastWinsLazy) and the oracle
// leave different records; it reports false when doc does not parse.
func sameDedup(t testing.TB, doc []byte) bool {
	t.Helper()
	for _, deep := range []map[string]bool{ccDeepKeys, nil} {
		var p1, p2 fastjson.Parser
		v1, err1 := p1.ParseBytes(doc)
		v2, err2 := p2.ParseBytes(doc)
		if err1 != nil || err2 != nil {
			return false
		}
		if deep != nil && v1.GetObject() != nil {
			lastWinsTop(v1, deep)
		} else {
			lastWinsLazy(v1)
		}
		oracleLastWins(v2, deep)
		if got, want := marshal(nil, v1), marshal(nil, v2); !bytes.Equal(got, want) {
			t.Fatalf("deep %v: %.300q:\ngot  %.300s\nwant %.300s", deep != nil, doc, got, want)
		}
	}
	return true
}

// TestLastWinsOracle checks the walker against the oracle on objects of
// every size up to past the 256 keys looked at, with duplicates anywhere,
// many of them sharing a keyBit.
func TestLastWinsOracle(t *testing.T) {
	docs := []string{
		`{"a":1,"a":2}`, `{"message":{"k":1,"k":2},"other":{"k":1,"k":2}}`,
		`{"ab":1,"ba":2,"ab":3,"":4,"":5}`, `[{"x":1,"x":[{"y":1,"y":2}]}]`,
		`{"message":[{"a":{"b":1,"b":2}}],"message":{"c":1,"c":2}}`,
	}
	r := rand.New(rand.NewPCG(1, 2))
	for _, n := range []int{2, 5, 20, 64, 255, 256, 257, 300} {
		for range 5 {
			var b strings.Builder
			b.WriteString(`{"message":{`)
			for i := range n {
				if i > 0 {
					b.WriteByte(',')
				}
				// keys from a small alphabet: many twins, many shared bits
				fmt.Fprintf(&b, `"%c%d%c":%d`, 'a'+r.IntN(3), r.IntN(n), 'a'+r.IntN(3), i)
			}
			b.WriteString(`}}`)
			docs = append(docs, b.String())
		}
	}
	for _, d := range docs {
		if !sameDedup(t, []byte(d)) {
			t.Fatalf("%q does not parse", d)
		}
	}
}

// TestLastWinsOracleRealCorpus compares them on every record of the real
// corpus's JSON lines files.
func TestLastWinsOracleRealCorpus(t *testing.T) {
	root := testutil.RealCorpus(t)
	n := 0
	err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".jsonl") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, line := range bytes.Split(data, []byte("\n")) {
			if sameDedup(t, line) {
				n++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if n == 0 {
		t.Fatal("no record parsed")
	}
	t.Logf("%d records", n)
}

// FuzzLastWins checks the walker against the oracle on any input.
func FuzzLastWins(f *testing.F) {
	f.Add([]byte(`{"message":{"a":1,"b":2,"a":3},"x":{"a":1,"a":2}}`))
	f.Add([]byte(`[{"ab":1,"ba":2,"ab":{"c":1,"c":2}}]`))
	f.Fuzz(func(t *testing.T, doc []byte) {
		if !sameDedup(t, doc) {
			t.Skip("not JSON")
		}
	})
}

// BenchmarkLastWinsTop measures the walker and its oracle on the records
// of the real corpus's Claude Code files (each parsed once per pass).
func BenchmarkLastWinsTop(b *testing.B) {
	_, data, total := claudeCodeCorpus(b)
	var lines [][]byte
	for _, d := range data {
		lines = append(lines, bytes.Split(d, []byte("\n"))...)
	}
	for _, bc := range []struct {
		name string
		fn   func(*fastjson.Value)
	}{
		{"new", func(v *fastjson.Value) { lastWinsTop(v, ccDeepKeys) }},
		{"oracle", func(v *fastjson.Value) { oracleLastWins(v, ccDeepKeys) }},
		{"parse-only", func(*fastjson.Value) {}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			var p fastjson.Parser
			b.SetBytes(total)
			b.ReportAllocs()
			cpu := testutil.CPUTime()
			for i := 0; i < b.N; i++ {
				for _, l := range lines {
					if v, err := p.ParseBytes(l); err == nil && v.GetObject() != nil {
						bc.fn(v)
					}
				}
			}
			b.ReportMetric(float64((testutil.CPUTime()-cpu).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
	}
}
