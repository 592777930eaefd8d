package loader

import (
	"flag"
	"os"
	"testing"
)

// fuzzMinimizeDefault bounds how many times the fuzzer calls a target to
// minimise one input, unless -fuzzminimizetime is given.
//
// The fuzzer minimises every input that widens coverage before it goes on,
// and its minimiser tries every pair of cut points: a number of calls
// quadratic in the input's size. The seeds here are whole exports of several
// KB, so each new input cost the 60 s default in full and a 30 s session ran
// a handful of inputs (FuzzChatGPT: 8). With this bound a session runs
// thousands; pass -fuzzminimizetime (60s, or a count such as 100000x) to
// minimise a failing input further.
const fuzzMinimizeDefault = "500x"

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.fuzzminimizetime" })
	if !set {
		if err := flag.Set("test.fuzzminimizetime", fuzzMinimizeDefault); err != nil {
			panic(err)
		}
	}
	os.Exit(m.Run())
}
