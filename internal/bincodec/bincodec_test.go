package bincodec

import (
	"bytes"
	"encoding/binary"
	"math"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

type inner struct {
	Name  string
	Score *float64
	Tags  []string
}

type node struct {
	Val  int8
	Next *node
}

type sample struct {
	B       bool
	I       int
	I8      int8
	I64     int64
	U       uint
	U16     uint16
	F       float64
	F32     float32
	S       string
	Bad     string // invalid UTF-8
	Nil     []int
	Empty   []int
	Ints    []int
	Arr     [3]int
	M       map[string]int
	NilMap  map[string]int
	IntMap  map[int]string
	Ptr     *inner
	NilPtr  *inner
	Inners  []inner
	List    *node
	Skipped string `json:"-"`
	Custom  string
	hidden  int
}

func full() sample {
	one := 1.5
	return sample{
		B: true, I: -1 << 40, I8: -128, I64: math.MaxInt64, U: math.MaxUint64, U16: 65535,
		F: math.NaN(), F32: float32(math.Inf(-1)), S: "path/a.jsonl", Bad: "a\xff\xfeb",
		Empty: []int{}, Ints: []int{0, -1, 300}, Arr: [3]int{1, 2, 3},
		M: map[string]int{"b": 2, "a": 1, "": 0}, IntMap: map[int]string{3: "c", -1: "path/a.jsonl"},
		Ptr:     &inner{Name: "path/a.jsonl", Score: &one, Tags: []string{"x", "x", ""}},
		Inners:  []inner{{Name: "n"}, {Tags: []string{}}},
		List:    &node{Val: 1, Next: &node{Val: -2}},
		Skipped: "gone", Custom: "also gone", hidden: 7,
	}
}

func skipCustom(f reflect.StructField) bool { return f.Name == "Custom" }

// TestRoundTrip: a decoded value equals the encoded one in every bit: nil
// and empty slices and maps apart, NaN and infinities, invalid UTF-8, deep
// pointers; skipped, json:"-" and unexported fields come back zero.
func TestRoundTrip(t *testing.T) {
	c, err := New(&sample{}, skipCustom)
	if err != nil {
		t.Fatal(err)
	}
	in := full()
	data := c.Append(nil, &in)
	var out sample
	if err := c.Decode(data, &out); err != nil {
		t.Fatal(err)
	}
	want := in
	want.Skipped, want.Custom, want.hidden = "", "", 0
	if !math.IsNaN(out.F) || !math.IsInf(float64(out.F32), -1) {
		t.Errorf("floats: %v %v", out.F, out.F32)
	}
	out.F, want.F = 0, 0
	if !reflect.DeepEqual(out, want) {
		t.Errorf("round trip:\n got %#v\nwant %#v", out, want)
	}
	if out.Nil != nil || out.Empty == nil || out.NilMap != nil || out.NilPtr != nil || out.Inners[1].Tags == nil {
		t.Error("nil and empty are not kept apart")
	}
	// The decoded value keeps nothing of the data.
	for i := range data {
		data[i] = 'x'
	}
	if out.S != "path/a.jsonl" || out.Ptr.Name != "path/a.jsonl" || out.Bad != "a\xff\xfeb" {
		t.Errorf("decoded strings share the data: %q %q %q", out.S, out.Ptr.Name, out.Bad)
	}
	data = c.Append(nil, &in)
	// The path is written once, then referred to.
	if n := bytes.Count(data, []byte("path/a.jsonl")); n != 1 {
		t.Errorf("the repeated string is written %d times", n)
	}
	// Appending after other bytes, and the same value encodes the same.
	if again := c.Append([]byte("xy"), &in); !bytes.Equal(again[2:], data) {
		t.Error("encoding depends on the buffer or on map order")
	}
}

// TestCorrupt: every truncation and every single-byte change of an
// encoding either decodes or fails with an error; none panics, and a
// truncated encoding never decodes.
func TestCorrupt(t *testing.T) {
	c, err := New(&sample{}, skipCustom)
	if err != nil {
		t.Fatal(err)
	}
	in := full()
	data := c.Append(nil, &in)
	for n := 0; n < len(data); n++ {
		var out sample
		if err := c.Decode(data[:n], &out); err == nil {
			t.Errorf("truncated to %d of %d bytes: decoded", n, len(data))
		}
	}
	if err := c.Decode(append(data[:len(data):len(data)], 0), new(sample)); err == nil {
		t.Error("a trailing byte was accepted")
	}
	for i := range data {
		for _, x := range []byte{0x01, 0x80, 0xff} {
			bad := bytes.Clone(data)
			bad[i] ^= x
			var out sample
			_ = c.Decode(bad, &out) // must not panic
		}
	}
}

// TestFingerprint: the fingerprint changes with a field's name, type or
// place, and with what skip leaves out.
func TestFingerprint(t *testing.T) {
	type a struct {
		X int
		Y string
	}
	type b struct {
		X int
		Z string
	}
	type c struct {
		X int64
		Y string
	}
	type d struct {
		Y string
		X int
	}
	fp := func(v any, skip func(reflect.StructField) bool) string {
		cd, err := New(v, skip)
		if err != nil {
			t.Fatal(err)
		}
		return cd.Fingerprint()
	}
	seen := map[string]string{}
	for name, f := range map[string]string{
		"a": fp(a{}, nil), "b": fp(b{}, nil), "c": fp(c{}, nil), "d": fp(d{}, nil),
		"a without Y": fp(a{}, func(f reflect.StructField) bool { return f.Name == "Y" }),
	} {
		if other, ok := seen[f]; ok {
			t.Errorf("%s and %s share the fingerprint %q", name, other, f)
		}
		seen[f] = name
	}
	if fp(&a{}, nil) != fp(a{}, nil) {
		t.Error("a pointer and its type differ")
	}
}

// TestUnsupported: types the layout cannot hold are refused when compiled.
func TestUnsupported(t *testing.T) {
	type withAny struct{ V any }
	type withFunc struct{ F func() }
	for _, v := range []any{withAny{}, withFunc{}, make(chan int)} {
		if _, err := New(v, nil); err == nil || !strings.Contains(err.Error(), "cannot encode") {
			t.Errorf("%T: %v", v, err)
		}
	}
}

func FuzzDecode(f *testing.F) {
	c, err := New(&sample{}, skipCustom)
	if err != nil {
		f.Fatal(err)
	}
	in := full()
	f.Add(c.Append(nil, &in))
	f.Add([]byte{})
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f})
	f.Fuzz(func(t *testing.T, data []byte) {
		var out sample
		if c.Decode(data, &out) != nil {
			return
		}
		// What decodes encodes back to the same bytes, unless it holds
		// strings the encoder would share differently or unsorted maps.
		_ = c.Append(nil, &out)
	})
}

// bigElem is a slice element of 512 bytes that encodes in as few as 64.
type bigElem struct{ A [64]int64 }

// TestClaimedLengthBoundsAllocation: a length that the data left could
// hold only in its smallest encoding (one byte an element) must not make
// Decode allocate that many elements up front: a crafted 1 MB entry once
// made it allocate 512 MB before failing as truncated.
func TestClaimedLengthBoundsAllocation(t *testing.T) {
	for _, tc := range []struct {
		name string
		ptr  any
	}{
		{"slice", &struct{ S []bigElem }{}},
		{"map", &struct{ M map[int64]bigElem }{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := New(tc.ptr, nil)
			if err != nil {
				t.Fatal(err)
			}
			const claimed = 1 << 20
			data := binary.AppendUvarint(nil, claimed+1)
			data = append(data, make([]byte, claimed)...) // zeros: each element's fields decode, then the data ends
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err = c.Decode(data, tc.ptr)
			runtime.ReadMemStats(&after)
			if err == nil {
				t.Fatal("a truncated entry decoded")
			}
			if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
				t.Errorf("decoding a %d-byte entry allocated %d MB", len(data), got>>20)
			}
		})
	}
}
