package loader

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// File is one input file found by Walk.
type File struct {
	// Path is the file's path, slash-separated, as reached from the
	// command-line argument.
	Path string
	Size int64
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
	// Files are the transcript files, sorted by path.
	Files []File
	// Labels are the label files found inside the walked directories
	// (labels.jsonl, NAME.labels.jsonl), sorted by path.
	Labels []string
}

// Walk expands files and directories into the input files, sorted by path
// and without duplicates. A file named explicitly is always an input; inside
// directories only transcript-like names are (.jsonl, .json, .traj, .zip,
// optionally .gz or .zst), and .git directories are skipped. Label files met
// inside directories are returned apart, not read as transcripts.
func Walk(paths []string) (Inputs, error) {
	seen := map[string]bool{}
	var files []File
	var labels []string
	add := func(p string, size int64) {
		p = filepath.ToSlash(filepath.Clean(p))
		if !seen[p] {
			seen[p] = true
			files = append(files, File{Path: p, Size: size})
		}
	}
	for _, root := range paths {
		info, err := os.Stat(root)
		if err != nil {
			return Inputs{}, fmt.Errorf("input %s: %w", root, err)
		}
		if !info.IsDir() {
			add(root, info.Size())
			continue
		}
		err = filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return fmt.Errorf("walking %s: %w", p, err)
			}
			if d.IsDir() {
				if d.Name() == ".git" {
					return filepath.SkipDir
				}
				return nil
			}
			if !d.Type().IsRegular() {
				return nil
			}
			if IsLabelFile(d.Name()) {
				labels = append(labels, filepath.ToSlash(filepath.Clean(p)))
				return nil
			}
			if !wanted(d.Name()) {
				return nil
			}
			info, err := d.Info()
			if err != nil {
				return fmt.Errorf("walking %s: %w", p, err)
			}
			add(p, info.Size())
			return nil
		})
		if err != nil {
			return Inputs{}, err
		}
	}
	sort.Slice(files, func(i, j int) bool { return files[i].Path < files[j].Path })
	sort.Strings(labels)
	return Inputs{Files: files, Labels: labels}, nil
}
