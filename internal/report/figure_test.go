package report

import (
	"fmt"
	"strings"
	"testing"
)

// TestFigureOracle checks figure against the fmt.Fprintf it replaced.
func TestFigureOracle(t *testing.T) {
	big := strings.Repeat(`<path d="M1 2L3 4"/>`+"\n", 40000)
	cases := []struct{ id, svg, legend, caption string }{
		{"", "", "", ""},
		{"context", big, "<ul>%s %d %%</ul>\n", "<b>caption</b> 100%"},
		{"a\"b", "<svg/>", "", "é ✓ \x00"},
	}
	for _, c := range cases {
		var want, got strings.Builder
		want.WriteString("before\n")
		got.WriteString("before\n")
		fmt.Fprintf(&want, "<figure class=\"chart\" id=\"%s\">\n%s%s<figcaption>%s</figcaption>\n</figure>\n", c.id, c.svg, c.legend, c.caption)
		figure(&got, c.id, c.svg, c.legend, c.caption)
		if got.String() != want.String() {
			t.Errorf("figure(%q, %d-byte svg, %q, %q) differs from the fmt form", c.id, len(c.svg), c.legend, c.caption)
		}
	}
}
