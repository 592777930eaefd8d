package aggregate

import (
	"strconv"
)

// Plural is "1 compaction", "3 compactions".
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return strconv.Itoa(n) + " " + noun + "s"
}

// PctLabel formats a fraction as a whole percentage (axes and text).
func PctLabel(v float64) string { return strconv.FormatFloat(100*v, 'f', 0, 64) + "%" }

// PctOr is PctLabel, or "-" for an undefined value.
func PctOr(v *float64) string {
	if v == nil {
		return "-"
	}
	return PctLabel(*v)
}
