package analysis

import (
	"reflect"
	"strconv"
	"strings"
	"testing"
)

// TestNeedKindsMatchesSplit checks needKinds, which walks the detail with
// Cut, against splitting it at every ";" first, on well-formed details and
// on empty and malformed parts.
func TestNeedKindsMatchesSplit(t *testing.T) {
	split := func(detail string) []NeedKind {
		out := []NeedKind{}
		for _, part := range strings.Split(detail, ";") {
			kind, frac, ok := strings.Cut(part, "=")
			kept, needed, ok2 := strings.Cut(frac, "/")
			if !ok || !ok2 {
				continue
			}
			k, _ := strconv.ParseInt(kept, 10, 64)
			n, _ := strconv.ParseInt(needed, 10, 64)
			out = append(out, NeedKind{Kind: kind, Kept: k, Needed: n})
		}
		return out
	}
	for _, d := range []string{"", ";", "path=1/2", "path=1/2;error=0/1", "path=1/2;ident=3/4;url=0/1;error=2/2;command=1/1;constraint=0/3",
		"bad", "a=1/2;;b=3/4", "a=1/2;", ";a=1/2", "a=1;b=/", "=1/2"} {
		if got, want := needKinds(d), split(d); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: %+v, split gives %+v", d, got, want)
		}
	}
}
