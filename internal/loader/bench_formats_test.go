package loader

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/compactbench/compactbench/internal/testutil"
	"github.com/compactbench/compactbench/internal/transcript"
)

// exportChildEnv names the export a child test process reads for
// BenchmarkClaudeAIExport500MB.
const exportChildEnv = "COMPACTBENCH_EXPORT_CHILD"

// exportSize is the size of the generated export.
const exportSize = 500 << 20

// textPool is lorem-like ASCII text without characters JSON must escape,
// so slices of it can be written into JSON strings as they are.
var textPool = func() string {
	words := strings.Fields("the parser reads a stream of records and keeps one conversation in memory at a time while " +
		"tool results carry long outputs from the shell such as test logs diffs and stack traces func main return error " +
		"json decoder token value array object string number build passes fails because the index is out of range")
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for sb.Len() < 1<<20 {
		sb.WriteString(words[r.IntN(len(words))])
		if r.IntN(12) == 0 {
			sb.WriteString(". ")
		} else {
			sb.WriteByte(' ')
		}
	}
	return sb.String()
}()

// exportWriter writes a synthetic Claude.ai export shaped like the real
// ones: one line, conversations with thinking, server tool calls and their
// results, pasted attachments, files, and edited prompts that branch.
type exportWriter struct {
	w        *bufio.Writer
	r        *rand.Rand
	n        int64
	messages int // messages the reader should produce on the active paths
}

func (e *exportWriter) text(min, max int) string {
	n := min + e.r.IntN(max-min+1)
	off := e.r.IntN(len(textPool) - n)
	return textPool[off : off+n]
}

func (e *exportWriter) put(s string) {
	n, _ := e.w.WriteString(s)
	e.n += int64(n)
}

func (e *exportWriter) message(uuid, parent, sender, created, content string, extra string) {
	e.put(`{"uuid":"` + uuid + `","parent_message_uuid":"` + parent + `","sender":"` + sender + `","created_at":"` + created +
		`","updated_at":"` + created + `","content":[` + content + `]` + extra + `}`)
}

// conversation writes one conversation of about size bytes.
func (e *exportWriter) conversation(i int, size int) {
	uuid := fmt.Sprintf("conv-%06d", i)
	e.put(`{"uuid":"` + uuid + `","name":"synthetic conversation ` + strconv.Itoa(i) + `","summary":"","model":"claude-sonnet-4-5",` +
		`"created_at":"2025-01-01T00:00:00Z","updated_at":"2025-01-02T00:00:00Z","account":{"uuid":"acct"},"chat_messages":[`)
	start := e.n
	parent := claudeRootParent
	ts := func(k int) string { return fmt.Sprintf("2025-01-01T%02d:%02d:%02dZ", k/3600%24, k/60%60, k%60) }
	k := 0
	for first := true; e.n-start < int64(size) || first; first = false {
		if !first {
			e.put(",")
		}
		k += 2
		h := fmt.Sprintf("%s-h%d", uuid, k)
		extra := ""
		if e.r.IntN(10) == 0 {
			extra = `,"attachments":[{"file_name":"paste.txt","file_type":"txt","file_size":1,"extracted_content":"` + e.text(2000, 40000) + `"}],"files":[{"file_name":"shot.png"}]`
			e.messages++ // the injected attachment message
		}
		e.message(h, parent, "human", ts(k), `{"type":"text","text":"`+e.text(100, 2000)+`"}`, extra)
		e.messages++
		if e.r.IntN(7) == 0 {
			// An earlier version of the prompt, edited away: a branch.
			old := h + "-old"
			e.put(",")
			e.message(old, parent, "human", ts(k-1), `{"type":"text","text":"`+e.text(50, 500)+`"}`, "")
			e.put(",")
			e.message(old+"-a", old, "assistant", ts(k-1), `{"type":"text","text":"`+e.text(200, 2000)+`"}`, "")
		}
		a := fmt.Sprintf("%s-a%d", uuid, k)
		content := `{"type":"thinking","thinking":"` + e.text(100, 1500) + `","summaries":[],"cut_off":false}`
		if e.r.IntN(3) == 0 {
			content += `,{"type":"text","text":"` + e.text(50, 400) + `"},` +
				`{"type":"tool_use","name":"web_search","input":{"query":"` + e.text(10, 60) + `"}},` +
				`{"type":"tool_result","name":"web_search","content":[{"type":"knowledge","title":"result","url":"https://example.com","text":"` + e.text(500, 6000) + `"}],"is_error":false}`
			e.messages += 2 // the tool message and the assistant message after it
		}
		content += `,{"type":"text","text":"` + e.text(300, 4000) + `"}`
		e.put(",")
		e.message(a, h, "assistant", ts(k+1), content, "")
		e.messages++
		parent = a
	}
	e.put("]}")
}

// writeExport writes an export of at least size bytes and returns how many
// conversations and active-path messages it holds.
func writeExport(path string, size int64) (convs, messages int, err error) {
	f, err := os.Create(path)
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	e := &exportWriter{w: bufio.NewWriterSize(f, 1<<20), r: rand.New(rand.NewPCG(3, 4))}
	e.put("[")
	for e.n < size {
		if convs > 0 {
			e.put(",")
		}
		s := 20_000 + e.r.IntN(200_000)
		if convs == 100 {
			s = 40 << 20 // one very long conversation, as real exports have
		}
		e.conversation(convs, s)
		convs++
	}
	e.put("]")
	if err := e.w.Flush(); err != nil {
		return 0, 0, err
	}
	return convs, e.messages, f.Close()
}

// vmHWM returns the process's peak resident set size in KiB.
func vmHWM() int64 {
	data, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmHWM:"); ok {
			n, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return -1
}

// TestClaudeAIExportChild is the child process of
// BenchmarkClaudeAIExport500MB: it reads the export named by the
// environment and reports its counts and its own peak RSS.
func TestClaudeAIExportChild(t *testing.T) {
	path := os.Getenv(exportChildEnv)
	if path == "" {
		t.Skip("run by BenchmarkClaudeAIExport500MB")
	}
	var n, msgs, probs int
	var format string
	err := ReadFile(path, Options{}, func(tr *transcript.Transcript) error {
		n++
		msgs += len(tr.Messages)
		probs += len(tr.Problems)
		format = tr.Format
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("EXPORT-CHILD format=%s transcripts=%d messages=%d problems=%d hwm_kb=%d\n", format, n, msgs, probs, vmHWM())
}

// BenchmarkClaudeAIExport500MB generates a 500 MB Claude.ai export (one
// line, like the real ones, with one 40 MB conversation) and reads it in a
// child process, so that the peak RSS reported (VmHWM) is the reader's
// alone. It fails when the peak reaches 300 MB or the counts are wrong.
func BenchmarkClaudeAIExport500MB(b *testing.B) {
	path := filepath.Join(b.TempDir(), "conversations.json")
	convs, msgs, err := writeExport(path, exportSize)
	if err != nil {
		b.Fatal(err)
	}
	info, _ := os.Stat(path)
	b.SetBytes(info.Size())
	b.ResetTimer()
	var peak int64
	for i := 0; i < b.N; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestClaudeAIExportChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), exportChildEnv+"="+path)
		out, err := cmd.CombinedOutput()
		if err != nil {
			b.Fatalf("child: %v\n%s", err, out)
		}
		var format string
		var n, m, probs int
		var hwm int64
		line := out[strings.Index(string(out), "EXPORT-CHILD"):]
		if _, err := fmt.Sscanf(string(line), "EXPORT-CHILD format=%s transcripts=%d messages=%d problems=%d hwm_kb=%d", &format, &n, &m, &probs, &hwm); err != nil {
			b.Fatalf("child output %q: %v", out, err)
		}
		if format != ClaudeAIFormat || n != convs || m != msgs || probs != 0 {
			b.Fatalf("read %s: %d transcripts, %d messages, %d problems; want %s, %d, %d, 0", format, n, m, probs, ClaudeAIFormat, convs, msgs)
		}
		peak = max(peak, hwm)
	}
	b.ReportMetric(float64(peak)/1024, "peak-RSS-MB")
	b.ReportMetric(float64(info.Size())/(1<<20), "export-MB")
	if peak >= 300<<10 {
		b.Fatalf("peak RSS %d MB, budget 300 MB", peak>>10)
	}
}

// BenchmarkReadRealFormats reads each real corpus folder of the new
// formats.
func BenchmarkReadRealFormats(b *testing.B) {
	for _, dir := range []string{"codex", "swe-agent", "openhands", "adp", "claude-ai-synthetic"} {
		b.Run(dir, func(b *testing.B) {
			files := corpusFiles(b, testutil.RealCorpus(b, dir), ".json", ".jsonl", ".traj")
			var size int64
			for _, f := range files {
				info, _ := os.Stat(f)
				size += info.Size()
			}
			b.SetBytes(size)
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				for _, f := range files {
					if err := ReadFile(f, Options{}, func(*transcript.Transcript) error { return nil }); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}
