package gen

import (
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
)

// pick returns a random element of xs.
func pick[T any](r *rand.Rand, xs []T) T { return xs[r.IntN(len(xs))] }

// between returns a random int in [lo, hi].
func between(r *rand.Rand, lo, hi int) int { return lo + r.IntN(hi-lo+1) }

// chance reports true with probability p.
func chance(r *rand.Rand, p float64) bool { return r.Float64() < p }

// pickN returns n distinct elements of xs (fewer when xs is shorter), in a
// random order, without changing xs.
func pickN[T any](r *rand.Rand, xs []T, n int) []T {
	if n > len(xs) {
		n = len(xs)
	}
	idx := r.Perm(len(xs))[:n]
	out := make([]T, n)
	for i, j := range idx {
		out[i] = xs[j]
	}
	return out
}

// fill replaces {key} placeholders in tmpl by the value that follows key in
// kv (key, value, key, value...). Unknown placeholders stay as they are.
func fill(tmpl string, kv ...string) string {
	if strings.IndexByte(tmpl, '{') < 0 {
		return tmpl
	}
	var b strings.Builder
	b.Grow(len(tmpl) + 32)
	fillTo(&b, tmpl, kv...)
	return b.String()
}

// fillTo writes fill(tmpl, kv...) to b.
func fillTo(b *strings.Builder, tmpl string, kv ...string) {
	for {
		i := strings.IndexByte(tmpl, '{')
		if i < 0 {
			b.WriteString(tmpl)
			return
		}
		j := strings.IndexByte(tmpl[i:], '}')
		if j < 0 {
			b.WriteString(tmpl)
			return
		}
		key := tmpl[i+1 : i+j]
		if !isIdent(key) {
			// A literal brace (code, JSON): keep it and scan on.
			b.WriteString(tmpl[:i+1])
			tmpl = tmpl[i+1:]
			continue
		}
		val, ok := "", false
		for k := 0; k+1 < len(kv); k += 2 {
			if kv[k] == key {
				val, ok = kv[k+1], true
				break
			}
		}
		b.WriteString(tmpl[:i])
		if ok {
			b.WriteString(val)
		} else {
			b.WriteString(tmpl[i : i+j+1])
		}
		tmpl = tmpl[i+j+1:]
	}
}

func isIdent(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c == '_' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return false
		}
	}
	return true
}

// capitalize upper-cases the first ASCII letter.
func capitalize(s string) string {
	if s == "" || s[0] < 'a' || s[0] > 'z' {
		return s
	}
	return string(s[0]-32) + s[1:]
}

func itoa(n int) string { return strconv.Itoa(n) }

// Words the project-shaped text is made of.
var (
	projectNames = []string{"billing-api", "ledger", "kite", "harbor", "inkwell", "pathfinder", "relay", "sprout",
		"tally", "quarry", "beacon", "cobalt", "drift", "ember", "fathom", "granary", "helix", "juniper", "lumen",
		"meridian", "nimbus", "orchard", "parcel", "quill", "rivet", "sable", "tessera", "umber", "vellum", "wicket"}
	userNames = []string{"dev", "alex", "sam", "jordan", "priya", "mateo", "lena", "kofi", "yuki", "noor", "ravi", "ines"}
	modules   = []string{"auth", "billing", "cache", "config", "invoice", "parser", "router", "scheduler", "session",
		"storage", "tokenizer", "upload", "webhook", "metrics", "queue", "search", "payment", "report", "email",
		"retry", "ratelimit", "export", "importer", "inventory", "pricing", "audit", "notify", "geo", "catalog", "shipping"}
	verbs = []string{"parse", "load", "validate", "compute", "render", "fetch", "apply", "build", "resolve", "normalize",
		"encode", "decode", "merge", "flush", "schedule", "format", "split", "collect", "refresh", "reconcile"}
	nouns = []string{"total", "config", "token", "header", "entry", "batch", "window", "record", "amount", "payload",
		"request", "limit", "cursor", "digest", "range", "summary", "policy", "address", "rate", "snapshot"}
	fields = []string{"id", "name", "amount", "currency", "created_at", "status", "items", "count", "key", "value",
		"owner", "expires_at", "retries", "region", "quantity", "price", "email", "path", "size", "version"}
	conditions = []string{"the list is empty", "the amount has three decimal places", "the header is missing",
		"two requests arrive at the same time", "the input ends without a newline", "the timezone is not UTC",
		"the cache entry has expired", "the user has no email address", "the batch is larger than 1000 items",
		"the config file uses tabs", "the currency is JPY", "the retry count hits the limit",
		"the date falls on a leap day", "the path contains spaces", "the token was issued in the future"}
	symptoms = []string{"returns the wrong total", "panics", "hangs forever", "drops the last item",
		"double-counts discounts", "rejects valid input", "leaks a goroutine", "returns stale data",
		"rounds in the wrong direction", "ignores the limit", "writes a corrupt file", "logs the secret in plain text"}
	features = []featureIdea{
		{"CSV export for invoices", []string{"add the export model and serializer", "wire an /export endpoint", "add a --since flag to filter by date"}},
		{"rate limiting on the login endpoint", []string{"add a token-bucket limiter", "hook it into the login handler", "make the limits configurable"}},
		{"retries with exponential backoff for webhook delivery", []string{"add a backoff policy type", "use it in the delivery worker", "record attempts in the audit log"}},
		{"a dry-run mode for the importer", []string{"thread a dry-run option through the importer", "print a diff of what would change", "add a summary line at the end"}},
		{"pagination for the search API", []string{"add cursor encoding", "return next-page tokens from the handler", "document the new parameters"}},
		{"soft deletes for catalog items", []string{"add a deleted_at column and migration", "filter deleted items in queries", "add a restore command"}},
		{"email notifications when a report is ready", []string{"add a notification template", "send it from the report job", "add an opt-out setting"}},
		{"per-tenant configuration overrides", []string{"load overrides from the tenants table", "merge them over the defaults", "expose them in the admin API"}},
		{"a health-check endpoint with dependency status", []string{"add the /healthz handler", "probe the database and the queue", "add a readiness variant"}},
		{"structured JSON logging", []string{"introduce a logger interface", "replace the printf calls", "add request ids to every line"}},
	}
	sentences = []string{
		"The {noun} is computed once and then reused by every caller.",
		"This path only runs when {cond}.",
		"{Fn} is called from the request handler and from the nightly job.",
		"The test covers the happy path but not the case where {cond}.",
		"Nothing else reads the {field} field, so the change stays local.",
		"The value is rounded before it is stored, which is where the drift comes from.",
		"The lock is held while the {noun} is rebuilt, so readers wait.",
		"Errors from {fn} are wrapped and passed up unchanged.",
		"The fixture builds three records with different {field} values.",
		"The default comes from the config file and can be overridden per call.",
	}
)

// featureIdea is a feature with the parts it is built in.
type featureIdea struct {
	name  string
	parts []string
}

// prose returns n sentences about a project, filled with its words.
func prose(r *rand.Rand, n int, kv ...string) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(fill(pick(r, sentences), kv...))
	}
	return b.String()
}

// Pools of random-looking text: signatures and hashes are cut from them
// instead of drawn character by character. They are made on first use, not
// when the package is initialised: every command of the binary imports gen,
// and only gen uses them (64 KiB drawn one byte at a time cost a run ~1 ms
// of start-up).
var (
	b64Pool = sync.OnceValue(func() string {
		return makePool(1<<16, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")
	})
	hexPool = sync.OnceValue(func() string { return makePool(1<<12, hexDigits) })
)

func makePool(n int, alphabet string) string {
	r := rand.New(rand.NewPCG(1, 2))
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// cut returns n characters of pool from a random offset.
func cut(r *rand.Rand, pool string, n int) string {
	if n > len(pool) {
		n = len(pool)
	}
	off := r.IntN(len(pool) - n + 1)
	return pool[off : off+n]
}

// signature returns a thinking signature of n characters.
func signature(r *rand.Rand, n int) string { return "Er" + cut(r, b64Pool(), n-2) }

// shortHash returns a 7-character commit-like hash.
func shortHash(r *rand.Rand) string { return cut(r, hexPool(), 7) }
