package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/compactbench/compactbench/internal/testutil"
)

// duckdbQueryScript runs the SQL query given as its argument and prints the
// rows as JSON.
const duckdbQueryScript = `
const { DuckDBInstance } = require('@duckdb/node-api');
(async () => {
  const db = await DuckDBInstance.create(':memory:');
  const con = await db.connect();
  await con.run('SET threads = 1');
  const r = await con.runAndReadAll(process.argv[2]);
  process.stdout.write(JSON.stringify({ columns: r.columnNames(), rows: r.getRowsJson() }));
})().catch(e => { console.error(e); process.exit(1); });
`

// readmeShardQuery is the DuckDB query over the shards' Parquet files that
// the README shows.
var readmeShardQuery = regexp.MustCompile("(?s)queried together without merging[^`]*```sql\n(.*?)```")

// TestReadmeShardQueryInDuckDB runs the README's DuckDB query over the
// Parquet files of 3 shards and over the unsharded run's: the answers are
// the same, and the query names only columns that exist.
func TestReadmeShardQueryInDuckDB(t *testing.T) {
	modules := duckdbModules(t)
	readme, err := os.ReadFile(filepath.Join(testutil.RepoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	m := readmeShardQuery.FindSubmatch(readme)
	if m == nil {
		t.Fatal("README.md has no DuckDB query over shards")
	}
	query := string(m[1])
	const glob = "out/shard-*/"
	if !strings.Contains(query, glob) {
		t.Fatalf("the README's query does not read %s: %s", glob, query)
	}
	dir := t.TempDir()
	const corpus = "../../corpora"
	runOK(t, "run", "-q", "--no-progress", "--format", "parquet", "-o", filepath.Join(dir, "whole"), corpus)
	for k := 1; k <= 3; k++ {
		runOK(t, "run", "-q", "--no-progress", "--format", "parquet", "--shard", fmt.Sprintf("%d/3", k), "-o", filepath.Join(dir, "out", fmt.Sprintf("shard-%d", k)), corpus)
	}
	script := filepath.Join(dir, "query.cjs")
	if err := os.WriteFile(script, []byte(duckdbQueryScript), 0o644); err != nil {
		t.Fatal(err)
	}
	ask := func(q string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, "node", script, q)
		cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("node: %v\n%s\n%s", err, stderr.String(), q)
		}
		return string(out)
	}
	sharded := ask(strings.ReplaceAll(query, glob, filepath.ToSlash(filepath.Join(dir, "out", "shard-*"))+"/"))
	whole := ask(strings.ReplaceAll(query, glob, filepath.ToSlash(filepath.Join(dir, "whole"))+"/"))
	if sharded != whole {
		t.Errorf("over the shards:\n%s\nover the unsharded run:\n%s", sharded, whole)
	}
	if !strings.Contains(whole, `"rows":[[`) {
		t.Errorf("the query returned no rows: %s", whole)
	}
	t.Log(whole)
}
