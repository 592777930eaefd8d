package docscheck

import (
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// root is the repository root, two levels above this package.
const root = "../.."

// outsideCitations are ways a comment cites a document that is not in the
// repository. The shared design notes, reference facts and labelling policy
// of the project's origin, the seed documents and their section numbers
// exist only beside the repository; docs/ holds what the code relies on.
var outsideCitations = []struct {
	name string
	re   *regexp.Regexp
}{
	{"a design or reference note outside the repository", regexp.MustCompile(`\b(REFERENCE|DESIGN|LABELLING|READERS)(\.md\b|\s+§)`)},
	{"the shared folder beside the repository", regexp.MustCompile(`(\.\./)?\bshared/(seeds|gold|hooks|tools|[A-Z]\w*\.md)`)},
	{"a path into ../shared other than the real corpus", regexp.MustCompile(`\.\./shared\b(/?$|/[^r]|/r[^e])`)},
	{"a seed file name", regexp.MustCompile(`\b\d{3}_[0-9a-f]{16}(\.txt)?\b`)},
	{"a section sign (sections of documents outside the repository)", regexp.MustCompile(`§`)},
}

// seedRef finds the seeds a comment names ("seed 004", "seeds 001/002",
// "seeds 000 and 001").
var seedRef = regexp.MustCompile(`\b[Ss]eeds?\s+(\d{3})(?:\s*(?:/|,|and|or)\s*(\d{3}))*`)

var threeDigits = regexp.MustCompile(`\d{3}`)

// goFiles lists the repository's Go files, testdata and hidden folders left
// out.
func goFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		name := d.Name()
		if d.IsDir() {
			if path != root && (strings.HasPrefix(name, ".") || name == "testdata" || name == "node_modules") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(name, ".go") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 50 {
		t.Fatalf("found only %d Go files under %s: is the root right?", len(files), root)
	}
	return files
}

// comment is one comment line with its position.
type comment struct {
	pos  string
	text string
}

func comments(t *testing.T) []comment {
	t.Helper()
	var out []comment
	fset := token.NewFileSet()
	for _, path := range goFiles(t) {
		f, err := parser.ParseFile(fset, path, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatalf("parse %s: %v", path, err)
		}
		for _, cg := range f.Comments {
			for _, c := range cg.List {
				p := fset.Position(c.Slash)
				for i, line := range strings.Split(c.Text, "\n") {
					rel, _ := filepath.Rel(root, p.Filename)
					out = append(out, comment{pos: filepath.ToSlash(rel) + ":" + strconv.Itoa(p.Line+i), text: line})
				}
			}
		}
	}
	return out
}

// TestCommentsCiteOnlyTheRepository fails on any Go comment that cites a
// document outside the repository. Rewrite such a comment to cite docs/
// ("docs/strategies.md, window") or to state the fact itself.
func TestCommentsCiteOnlyTheRepository(t *testing.T) {
	for _, c := range comments(t) {
		for _, oc := range outsideCitations {
			if m := oc.re.FindString(c.text); m != "" {
				t.Errorf("%s: comment cites %s (%q); cite docs/ or state the fact: %s", c.pos, oc.name, m, strings.TrimSpace(c.text))
			}
		}
	}
}

// TestSeedsNamedInCommentsAreDocumented fails when a comment names a seed
// that docs/strategies.md does not describe: "seed 004" must lead a reader
// somewhere inside the repository.
func TestSeedsNamedInCommentsAreDocumented(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "strategies.md"))
	if err != nil {
		t.Fatal(err)
	}
	named := map[string][]string{}
	for _, c := range comments(t) {
		for _, m := range seedRef.FindAllString(c.text, -1) {
			for _, n := range threeDigits.FindAllString(m, -1) {
				named[n] = append(named[n], c.pos)
			}
		}
	}
	if len(named) == 0 {
		t.Log("no comment names a seed")
	}
	for n, where := range named {
		if !strings.Contains(string(doc), "**seed "+n+"**") {
			t.Errorf("seed %s is named in comments (%s) but docs/strategies.md has no **seed %s** entry", n, where[0], n)
		}
	}
}

// mdLink finds inline Markdown links; the target is group 1.
var mdLink = regexp.MustCompile(`\]\(([^)\s]+)\)`)

// TestDocLinksResolve fails on a relative link in the repository's Markdown
// (README.md, docs/, corpora/...) whose file does not exist, so the
// documentation never points out of the repository by accident.
func TestDocLinksResolve(t *testing.T) {
	var files []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "results") {
				return filepath.SkipDir
			}
			return nil
		}
		if strings.HasSuffix(d.Name(), ".md") {
			files = append(files, path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 3 {
		t.Fatalf("found only %d Markdown files", len(files))
	}
	sort.Strings(files)
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range mdLink.FindAllStringSubmatch(string(data), -1) {
			target := m[1]
			if strings.Contains(target, "://") || strings.HasPrefix(target, "#") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			target, _, _ = strings.Cut(target, "#")
			p := filepath.Join(filepath.Dir(f), filepath.FromSlash(target))
			if _, err := os.Stat(p); err != nil {
				t.Errorf("%s links to %s, which does not exist", f, m[1])
			}
			if rel, err := filepath.Rel(root, p); err != nil || strings.HasPrefix(rel, "..") {
				t.Errorf("%s links to %s, outside the repository", f, m[1])
			}
		}
	}
}
