package loader

import (
	"bytes"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"syscall"

	"github.com/compactbench/compactbench/internal/transcript"
)

// keyOf identifies the file info describes.
func keyOf(info os.FileInfo) fileKey {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return fileKey{dev: uint64(st.Dev), ino: uint64(st.Ino)}
	}
	return fileKey{path: info.Name()}
}

// File is one input file found by Walk.
type File struct {
	// Path is the file's path, slash-separated, as reached from the
	// command-line argument.
	Path string
	Size int64
	// Problem, when set, says why the path cannot be read; it is never
	// opened (see ProblemTranscript).
	Problem string
}

// ProblemTranscript is the transcript that accounts for an input that
// cannot be read: format "unknown", one problem at line 0.
func ProblemTranscript(path, reason string) *transcript.Transcript {
	return &transcript.Transcript{
		ID: stem(path), Path: path, Format: "unknown", Kind: transcript.KindSession,
		Problems: []transcript.Problem{{Line: 0, Reason: reason}},
	}
}

// inputExts are the file name endings a directory walk picks up.
var inputExts = []string{".jsonl", ".json", ".traj", ".zip"}

// IsLabelFile reports whether a file name is a label file rather than a
// transcript (labels.jsonl, or NAME.labels.jsonl); directory walks skip them.
func IsLabelFile(name string) bool {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".zst")
	return name == "labels.jsonl" || strings.HasSuffix(name, ".labels.jsonl")
}

func wanted(name string) bool {
	if IsLabelFile(name) {
		return false
	}
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".zst")
	for _, ext := range inputExts {
		if strings.HasSuffix(name, ext) {
			return true
		}
	}
	return false
}

// Inputs are the files a walk found.
type Inputs struct {
	// Files are the transcript files, sorted by path. A File with a
	// Problem is one the walk could not use (an unreadable directory, a
	// FIFO or socket met inside a directory, a symlink loop): it is never
	// opened, and becomes a problem row.
	Files []File
	// Labels are the label files found inside the walked directories
	// (labels.jsonl, NAME.labels.jsonl), sorted by path.
	Labels []string
}

// isSidecar reports the files Claude Code writes beside a subagent's
// transcript (subagents/agent-ID.meta.json, holding the agent type): known,
// not transcripts, and not problems.
func isSidecar(name string) bool {
	return strings.HasPrefix(name, "agent-") && strings.HasSuffix(name, ".meta.json")
}

// Walk expands files and directories into the input files, sorted by path
// and without duplicates. A file named explicitly is always an input; inside
// directories only transcript-like names are (.jsonl, .json, .traj, .zip,
// optionally .gz or .zst), and .git directories are skipped. Label files met
// inside directories are returned apart, not read as transcripts.
//
// Symbolic links are followed, to files and directories alike; a directory
// reached twice (a link loop, or two links to one directory) is walked once,
// and a file reached twice is read once. Directories in skip (the run's
// output directory) and directories holding a compactbench output set
// (summary.json written by compactbench) are not walked, so a run never
// reads its own outputs. A FIFO, socket or device is never opened: inside a
// directory it is a File with a Problem, and named on the command line it
// is an error, as is a path that does not exist. A directory or entry that
// cannot be read is a File with a Problem, and the walk goes on.
func Walk(paths []string, skip ...string) (Inputs, error) {
	w := &walker{seenPath: map[string]bool{}, seenFile: map[fileKey]bool{}, seenDir: map[fileKey]bool{}}
	for _, s := range skip {
		if info, err := os.Stat(s); err == nil {
			w.skip = append(w.skip, keyOf(info))
		}
	}
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			return Inputs{}, fmt.Errorf("input %s: %w", root, err)
		}
		switch {
		case info.IsDir():
			w.dir(root, info)
		case info.Mode().IsRegular():
			w.add(root, info, "")
		default:
			return Inputs{}, fmt.Errorf("input %s is %s, not a file or directory; it is not read", root, fileKind(info.Mode()))
		}
	}
	sort.Slice(w.files, func(i, j int) bool { return w.files[i].Path < w.files[j].Path })
	sort.Strings(w.labels)
	return Inputs{Files: w.files, Labels: w.labels}, nil
}

// fileKey identifies a file or directory whatever the path to it.
type fileKey struct {
	dev, ino uint64
	path     string // when the platform gives no inode
}

type walker struct {
	files    []File
	labels   []string
	seenPath map[string]bool
	seenFile map[fileKey]bool
	seenDir  map[fileKey]bool
	skip     []fileKey
}

func (w *walker) add(p string, info os.FileInfo, problem string) {
	p = filepath.ToSlash(filepath.Clean(p))
	if w.seenPath[p] {
		return
	}
	w.seenPath[p] = true
	if info != nil && problem == "" {
		k := keyOf(info)
		if w.seenFile[k] {
			return // the same file by another path
		}
		w.seenFile[k] = true
	}
	f := File{Path: p, Problem: problem}
	if info != nil {
		f.Size = info.Size()
	}
	w.files = append(w.files, f)
}

// dir walks a directory whose info (followed through links) is given.
func (w *walker) dir(p string, info os.FileInfo) {
	k := keyOf(info)
	if w.seenDir[k] || slices.Contains(w.skip, k) {
		return
	}
	w.seenDir[k] = true
	entries, err := os.ReadDir(p)
	if err != nil {
		if !IsOutputSetDir(p) { // a directory one may enter but not list
			w.add(p, nil, fmt.Sprintf("cannot read directory: %v", err))
		}
		return
	}
	// Only a directory that lists a summary.json can hold an output set:
	// the others are not opened to look (one failed open per directory).
	if slices.ContainsFunc(entries, func(e fs.DirEntry) bool { return e.Name() == "summary.json" }) && IsOutputSetDir(p) {
		return
	}
	for _, e := range entries {
		name := e.Name()
		full := filepath.Join(p, name)
		if e.IsDir() && name == ".git" {
			continue
		}
		info, err := os.Stat(full) // follows links
		if err != nil {
			if e.Type()&fs.ModeSymlink != 0 && !wanted(name) && !IsLabelFile(name) {
				continue // a dangling link to nothing we would read
			}
			w.add(full, nil, fmt.Sprintf("cannot read: %v", err))
			continue
		}
		switch {
		case info.IsDir():
			w.dir(full, info)
		case IsLabelFile(name):
			w.labels = append(w.labels, filepath.ToSlash(filepath.Clean(full)))
		case !wanted(name) || isSidecar(name):
		case !info.Mode().IsRegular():
			w.add(full, nil, fmt.Sprintf("not a regular file (%s); not read", fileKind(info.Mode())))
		default:
			w.add(full, info, "")
		}
	}
}

// IsOutputSetDir reports whether dir holds a compactbench output set: a
// summary.json whose meta names compactbench.
func IsOutputSetDir(dir string) bool {
	f, err := os.Open(filepath.Join(dir, "summary.json"))
	if err != nil {
		return false
	}
	defer f.Close()
	head := make([]byte, 4096)
	n, _ := io.ReadFull(f, head)
	head = head[:n]
	return bytes.Contains(head, []byte(`"schema_version"`)) && bytes.Contains(head, []byte(`"tool": "compactbench"`))
}
