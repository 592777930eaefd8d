package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/compactbench/compactbench/internal/testutil"
)

// duckdbScript prints, for every Parquet file named on its command line,
// the columns, their DuckDB types and every row as JSON (BIGINT as strings,
// DOUBLE as numbers, NULL as null), in file order.
const duckdbScript = `
const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  await con.run('SET threads = 1');
  const out = {};
  for (const file of process.argv.slice(2)) {
    const r = await con.runAndReadAll("SELECT * FROM read_parquet('" + file.replace(/'/g, "''") + "')");
    out[file] = { columns: r.columnNames(), types: r.columnTypes().map(t => t.toString()), rows: r.getRowsJson() };
  }
  process.stdout.write(JSON.stringify(out));
})().catch(e => { console.error(e); process.exit(1); });
`

// duckdbModules returns the node_modules directory holding
// @duckdb/node-api: $COMPACTBENCH_NODE_MODULES, or .tools/node/node_modules
// in the repository (make tools installs it there).
func duckdbModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		needTool(t, "node is not installed")
	}
	dir := os.Getenv("COMPACTBENCH_NODE_MODULES")
	if dir == "" {
		dir = filepath.Join(testutil.RepoRoot(t), ".tools", "node", "node_modules")
	}
	if _, err := os.Stat(filepath.Join(dir, "@duckdb", "node-api")); err != nil {
		needTool(t, "@duckdb/node-api is not in %s (make tools installs it)", dir)
	}
	return dir
}

type duckTable struct {
	Columns []string            `json:"columns"`
	Types   []string            `json:"types"`
	Rows    [][]json.RawMessage `json:"rows"`
}

// TestParquetReadsInDuckDB reads every exported Parquet file with DuckDB (a
// reader independent of the Go library that wrote them) and checks it cell
// by cell against the CSV of the same table: same columns in the same order,
// same rows, equal values, NULL exactly where the CSV cell is empty for an
// optional column.
func TestParquetReadsInDuckDB(t *testing.T) {
	modules := duckdbModules(t)
	for name, args := range checkedRuns() {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if code, _, stderr := runCLI(t, append([]string{"run", "-q", "--format", "csv,parquet", "-o", dir}, args...)...); code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
			sort.Strings(files)
			if len(files) < 9 {
				t.Fatalf("only %d Parquet files", len(files))
			}
			script := filepath.Join(t.TempDir(), "read.cjs")
			if err := os.WriteFile(script, []byte(duckdbScript), 0o644); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
			defer cancel()
			cmd := exec.CommandContext(ctx, "node", append([]string{script}, files...)...)
			cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
			var stderr bytes.Buffer
			cmd.Stderr = &stderr
			out, err := cmd.Output()
			if err != nil {
				t.Fatalf("node: %v\n%s", err, stderr.String())
			}
			var tables map[string]duckTable
			if err := json.Unmarshal(out, &tables); err != nil {
				t.Fatalf("node output: %v", err)
			}
			rows := 0
			for _, f := range files {
				rows += compareWithCSV(t, f, tables[f])
			}
			if rows == 0 {
				t.Fatal("no rows compared")
			}
			t.Logf("%d tables, %d rows compared cell by cell", len(files), rows)
		})
	}
}

// compareWithCSV checks one DuckDB-read table against NAME.csv and returns
// the rows compared.
func compareWithCSV(t *testing.T, parquetFile string, got duckTable) int {
	t.Helper()
	name := strings.TrimSuffix(filepath.Base(parquetFile), ".parquet")
	f, err := os.Open(strings.TrimSuffix(parquetFile, ".parquet") + ".csv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("%s.csv: %v", name, err)
	}
	if strings.Join(got.Columns, ",") != strings.Join(recs[0], ",") {
		t.Fatalf("%s: DuckDB columns %v, CSV %v", name, got.Columns, recs[0])
	}
	if len(got.Rows) != len(recs)-1 {
		t.Fatalf("%s: DuckDB reads %d rows, the CSV has %d", name, len(got.Rows), len(recs)-1)
	}
	for i, row := range got.Rows {
		for j, raw := range row {
			want := recs[i+1][j]
			if msg := cellMismatch(got.Types[j], raw, want); msg != "" {
				t.Errorf("%s row %d column %s (%s): %s", name, i+1, got.Columns[j], got.Types[j], msg)
				if t.Failed() && i > 3 {
					return len(got.Rows)
				}
			}
		}
	}
	return len(got.Rows)
}

// cellMismatch compares a DuckDB JSON value with a CSV cell; "" when equal.
func cellMismatch(typ string, raw json.RawMessage, want string) string {
	if string(raw) == "null" {
		if want != "" {
			return "NULL in Parquet, " + strconv.Quote(want) + " in CSV"
		}
		return ""
	}
	switch {
	case strings.HasSuffix(typ, "[]"):
		// A LIST column: the CSV cell is the same list as a JSON array.
		// DuckDB renders some numbers as strings, so both sides are
		// compared with every scalar as text.
		var g, w any
		if err := json.Unmarshal(raw, &g); err != nil {
			return "not JSON: " + string(raw)
		}
		if err := json.Unmarshal([]byte(want), &w); err != nil {
			return "the CSV cell is not a JSON list: " + want
		}
		if _, ok := g.([]any); !ok {
			return "not a list: " + string(raw)
		}
		if a, b := scalarsAsText(g), scalarsAsText(w); a != b {
			return a + " vs " + b
		}
		return ""
	}
	switch typ {
	case "VARCHAR":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil || s != want {
			return string(raw) + " vs " + strconv.Quote(want)
		}
	case "BIGINT", "INTEGER":
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			if err := json.Unmarshal(raw, new(json.Number)); err != nil {
				return "not an integer: " + string(raw)
			}
			s = string(raw)
		}
		if s != want {
			return s + " vs " + want
		}
	case "DOUBLE", "FLOAT":
		var v float64
		if err := json.Unmarshal(raw, &v); err != nil {
			return "not a number: " + string(raw)
		}
		w, err := strconv.ParseFloat(want, 64)
		if err != nil || v != w {
			return string(raw) + " vs " + want
		}
	case "BOOLEAN":
		if string(raw) != want {
			return string(raw) + " vs " + want
		}
	default:
		return "unexpected type"
	}
	return ""
}

// scalarsAsText renders a decoded JSON value with every scalar as a string
// (map keys sorted by encoding/json).
func scalarsAsText(v any) string {
	var norm func(any) any
	norm = func(v any) any {
		switch x := v.(type) {
		case []any:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = norm(e)
			}
			return out
		case map[string]any:
			out := map[string]any{}
			for k, e := range x {
				out[k] = norm(e)
			}
			return out
		case nil:
			return nil
		}
		return fmt.Sprint(v)
	}
	js, _ := json.Marshal(norm(v))
	return string(js)
}

// TestParquetLists: list-valued columns are LIST columns in Parquet, as
// DuckDB reads them, and every table carries run_id and config_hash.
func TestParquetLists(t *testing.T) {
	modules := duckdbModules(t)
	dir := t.TempDir()
	if code, _, stderr := runCLI(t, "run", "-q", "--format", "parquet,json", "--window", "60000", "-o", dir, "../../corpora"); code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "*.parquet"))
	sort.Strings(files)
	script := filepath.Join(t.TempDir(), "read.cjs")
	if err := os.WriteFile(script, []byte(duckdbScript), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{script}, files...)...)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node: %v", err)
	}
	var tables map[string]duckTable
	if err := json.Unmarshal(out, &tables); err != nil {
		t.Fatal(err)
	}
	wantList := map[string]string{"transcripts": "ignored_types", "events": "need_detail", "rereads": "reread_paths"}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".parquet")
		tb := tables[f]
		if len(tb.Columns) < 2 || tb.Columns[0] != "run_id" || tb.Columns[1] != "config_hash" {
			t.Errorf("%s: columns start %v, want run_id, config_hash", name, tb.Columns[:min(2, len(tb.Columns))])
		}
		if col, ok := wantList[name]; ok {
			found := false
			for i, c := range tb.Columns {
				if c == col {
					found = true
					if !strings.HasSuffix(tb.Types[i], "[]") {
						t.Errorf("%s.%s is %s, want a LIST", name, col, tb.Types[i])
					}
				}
			}
			if !found {
				t.Errorf("%s has no column %s", name, col)
			}
		}
	}
}
