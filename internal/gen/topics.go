package gen

import "strings"

// topic is a research question with the material its sources give.
type topic struct {
	name    string
	q       string
	follow  string
	queries []string
	sites   []link
	facts   []string
}

var researchTopics = []*topic{
	{name: "Postgres connection pooling", q: "What's the recommended way to do connection pooling for Postgres from a web app with many short requests? PgBouncer or the driver's pool?",
		follow:  "what about prepared statements with PgBouncer in transaction mode?",
		queries: []string{"pgbouncer vs application connection pool postgres", "pgbouncer transaction mode prepared statements", "postgres max_connections per connection memory"},
		sites: []link{{"PgBouncer features", "https://www.pgbouncer.org/features.html"}, {"Connection pooling - PostgreSQL wiki", "https://wiki.postgresql.org/wiki/Number_Of_Database_Connections"},
			{"pgx pool documentation", "https://pkg.go.dev/github.com/jackc/pgx/v5/pgxpool"}, {"Prepared statements in transaction mode", "https://www.pgbouncer.org/config.html"}},
		facts: []string{"Each Postgres connection is a separate backend process, so thousands of idle connections cost real memory.",
			"PgBouncer in transaction mode lets many clients share a small number of server connections.",
			"Since PgBouncer 1.21, protocol-level prepared statements are supported in transaction mode through max_prepared_statements.",
			"An in-process pool is enough when there are few application instances; a pooler in front helps when instances scale out.",
			"Session-level features such as SET, advisory locks and LISTEN do not work across transaction-mode pooling."}},
	{name: "HTTP retry budgets", q: "How should a client retry failed HTTP calls without making an outage worse? Is exponential backoff enough?",
		follow:  "how do retry budgets differ from circuit breakers?",
		queries: []string{"exponential backoff jitter retries", "retry budget client side", "circuit breaker vs retry budget"},
		sites: []link{{"Exponential Backoff And Jitter", "https://aws.amazon.com/blogs/architecture/exponential-backoff-and-jitter/"}, {"Handling overload - Google SRE book", "https://sre.google/sre-book/handling-overload/"},
			{"gRPC retry design", "https://github.com/grpc/proposal/blob/master/A6-client-retries.md"}},
		facts: []string{"Backoff alone synchronises clients; adding random jitter spreads the retries out.",
			"A retry budget caps retries to a fraction of normal traffic, for example 10 percent, so retries cannot multiply load.",
			"Only idempotent requests should be retried automatically.",
			"Circuit breakers stop calls entirely after repeated failures, while budgets keep a trickle of retries going.",
			"gRPC's retry policy limits attempts per call and uses throttling tokens shared by the channel."}},
	{name: "SQLite in production", q: "Is SQLite a reasonable choice for a small multi-user web app in production? What are the limits?",
		follow:  "what does WAL mode change for concurrent writers?",
		queries: []string{"sqlite production web app limits", "sqlite wal mode concurrency", "sqlite busy_timeout"},
		sites:   []link{{"Appropriate Uses For SQLite", "https://www.sqlite.org/whentouse.html"}, {"Write-Ahead Logging", "https://www.sqlite.org/wal.html"}, {"SQLite busy timeout", "https://www.sqlite.org/c3ref/busy_timeout.html"}},
		facts: []string{"SQLite handles many concurrent readers but only one writer at a time.",
			"WAL mode lets readers proceed while a write is in progress.",
			"Setting a busy timeout makes writers wait for the lock instead of failing immediately.",
			"Sites with up to tens of thousands of requests a day are a common fit.",
			"It runs on one machine, so horizontal scaling needs a different design or replication tools."}},
	{name: "React Server Components data fetching", q: "In a Next.js app router project, where should data fetching live now — server components or client hooks?",
		follow:  "and how does caching of fetch work there?",
		queries: []string{"next.js app router data fetching server components", "next.js fetch cache revalidate", "react server components client components boundary"},
		sites:   []link{{"Data Fetching - Next.js", "https://nextjs.org/docs/app/building-your-application/data-fetching"}, {"Caching in Next.js", "https://nextjs.org/docs/app/building-your-application/caching"}, {"React Server Components", "https://react.dev/reference/rsc/server-components"}},
		facts: []string{"Server components can fetch data directly and send only the rendered result to the browser.",
			"Client components are still needed for state, effects and event handlers.",
			"Fetch results can be cached and revalidated on a time basis or on demand.",
			"Passing data from server to client components requires serialisable props.",
			"Libraries such as React Query remain useful for client-side mutations and polling."}},
	{name: "Go structured logging", q: "For a new Go service, should I use log/slog or a third-party logger like zap or zerolog?",
		follow:  "how do I add request ids to every slog line?",
		queries: []string{"log/slog vs zap performance", "slog handler context request id", "zerolog vs slog"},
		sites:   []link{{"log/slog package", "https://pkg.go.dev/log/slog"}, {"Structured Logging with slog - The Go Blog", "https://go.dev/blog/slog"}, {"zap benchmarks", "https://github.com/uber-go/zap"}},
		facts: []string{"log/slog has been in the standard library since Go 1.21.",
			"slog separates the front end (Logger) from the back end (Handler), so zap or zerolog can sit behind it.",
			"zap and zerolog are faster in micro-benchmarks, but the difference rarely matters outside hot paths.",
			"Request-scoped attributes can be added with a handler that reads values from the context.",
			"Using slog keeps dependencies down and lets libraries log without choosing a backend."}},
	{name: "Rust async runtimes", q: "Which async runtime should a new Rust CLI that does some HTTP use — tokio, async-std, or smol?",
		follow:  "can I avoid async entirely for a small CLI?",
		queries: []string{"tokio vs async-std vs smol 2024", "async-std maintenance status", "blocking reqwest cli"},
		sites:   []link{{"Tokio", "https://tokio.rs/"}, {"async-std repository", "https://github.com/async-rs/async-std"}, {"reqwest blocking client", "https://docs.rs/reqwest/latest/reqwest/blocking/"}},
		facts: []string{"Tokio has the largest ecosystem; reqwest, hyper and tonic build on it.",
			"async-std has seen little development and its maintainers point users to smol.",
			"smol is small and composable but fewer libraries integrate with it directly.",
			"reqwest has a blocking client that runs a runtime internally, which is fine for simple CLIs.",
			"For a handful of sequential requests, a synchronous client keeps the code simpler."}},
	{name: "Python packaging tools", q: "What's the current state of Python packaging? Should we switch from pip + requirements.txt to uv or poetry?",
		follow:  "does uv work with existing requirements files?",
		queries: []string{"uv vs poetry vs pip 2024", "uv pip compile requirements", "pyproject.toml dependency groups"},
		sites:   []link{{"uv documentation", "https://docs.astral.sh/uv/"}, {"Poetry documentation", "https://python-poetry.org/docs/"}, {"Python Packaging User Guide", "https://packaging.python.org/"}},
		facts: []string{"uv is a fast resolver and installer written in Rust that can replace pip, pip-tools and virtualenv.",
			"Poetry manages dependencies and publishing with its own lock file format.",
			"uv can compile and sync requirements.txt files, so adoption can be gradual.",
			"pyproject.toml is the standard place to declare project metadata and dependencies.",
			"Lock files make installs reproducible across machines and CI."}},
	{name: "Webhook signature verification", q: "How do I verify webhook signatures properly? We receive webhooks from a payment provider.",
		follow:  "how should we handle replayed webhooks?",
		queries: []string{"verify webhook signature hmac timing safe compare", "webhook replay attack timestamp tolerance", "stripe webhook signature verification"},
		sites:   []link{{"Check the webhook signatures", "https://docs.stripe.com/webhooks#verify-events"}, {"HMAC - RFC 2104", "https://www.rfc-editor.org/rfc/rfc2104"}, {"Webhook security best practices", "https://webhooks.fyi/security/replay-prevention"}},
		facts: []string{"Providers sign the raw request body with a shared secret using HMAC-SHA256.",
			"The signature must be computed over the raw bytes before any JSON parsing.",
			"Comparisons should use a constant-time function to avoid timing leaks.",
			"A timestamp in the signed payload with a tolerance window, often five minutes, limits replays.",
			"Storing processed event ids makes handlers idempotent when the same event arrives twice."}},
}

// digest is the text a search returns after its links.
func (t *topic) digest(s *sess) string {
	facts := pickN(s.rng, t.facts, between(s.rng, 2, 4))
	return strings.Join(facts, " ") + "\n\nREMINDER: cite the sources above with markdown links when you answer."
}

// page is what a fetched page says, as the fetch tool's model renders it.
func (t *topic) page(s *sess) string {
	var b strings.Builder
	b.WriteString("# " + capitalize(t.name) + "\n\n")
	for _, f := range pickN(s.rng, t.facts, between(s.rng, 3, len(t.facts))) {
		b.WriteString("- " + f + "\n")
	}
	b.WriteString("\n" + pick(s.rng, t.facts) + " The page also links to configuration examples and a changelog.\n")
	return b.String()
}

var synthOpeners = []string{"Based on what I found, ", "According to the documentation, ", "Here's a summary of what I found:\n\n",
	"Short answer: ", "## Summary\n\n", "From the sources: ", "The search results show that ", ""}

// synthesis is the answer built from the sources.
func (t *topic) synthesis(s *sess) string {
	r := s.rng
	var b strings.Builder
	b.WriteString(pick(r, synthOpeners))
	facts := pickN(r, t.facts, len(t.facts))
	b.WriteString(facts[0] + "\n\n")
	b.WriteString("**Key points**\n\n")
	for _, f := range facts[1:] {
		b.WriteString("- " + f + "\n")
	}
	b.WriteString("\n**Recommendation:** " + pick(r, []string{"start with the simplest option and measure", "go with the standard approach unless profiling says otherwise",
		"adopt it gradually, one service first", "keep the current setup and add the missing safeguard"}) + ".\n\nSources:\n")
	for _, l := range t.sites {
		b.WriteString("- [" + l.title + "](" + l.url + ")\n")
	}
	return b.String()
}

// qaTopic is a subject of plain questions answered from knowledge.
type qaTopic struct {
	name   string
	qs     []string
	points []string
	code   string
}

var qaTopics = []*qaTopic{
	{name: "concurrency primitives", qs: []string{"What's the difference between a mutex and a semaphore?", "When would I use a read-write lock instead of a mutex?", "Can a mutex cause priority inversion?"},
		points: []string{"A mutex gives one holder exclusive access; a semaphore counts permits and lets up to N holders in.",
			"Read-write locks help when reads vastly outnumber writes and critical sections are long.",
			"Under heavy write load a read-write lock can be slower than a plain mutex because of its bookkeeping.",
			"Priority inversion happens when a low-priority holder blocks a high-priority waiter; priority inheritance is the usual cure."},
		code: "var mu sync.RWMutex\n\nfunc get(k string) string {\n\tmu.RLock()\n\tdefer mu.RUnlock()\n\treturn cache[k]\n}"},
	{name: "database indexes", qs: []string{"Should I index every foreign key?", "What's a covering index?", "Why is my query not using the index?"},
		points: []string{"Indexing foreign keys speeds up joins and cascading deletes, but every index slows writes a little.",
			"A covering index holds every column a query needs, so the table itself is never read.",
			"The planner skips an index when it expects to read a large share of the table anyway.",
			"Functions on the indexed column, such as lower(email), prevent a plain index from being used."},
		code: "CREATE INDEX orders_customer_id_idx ON orders (customer_id) INCLUDE (status, total);"},
	{name: "git workflows", qs: []string{"Rebase or merge for feature branches?", "How do I undo the last commit but keep the changes?", "What does git reflog actually store?"},
		points: []string{"Rebasing keeps history linear; merging preserves when branches actually diverged.",
			"Never rebase commits that others have already pulled.",
			"`git reset --soft HEAD~1` moves the branch back and keeps the changes staged.",
			"The reflog records where HEAD and branch tips have pointed, which makes most mistakes recoverable."},
		code: "git reset --soft HEAD~1\ngit reflog -n 10"},
	{name: "HTTP caching", qs: []string{"What's the difference between Cache-Control no-cache and no-store?", "How do ETags work?", "Should API responses be cached at all?"},
		points: []string{"no-store forbids keeping a copy at all; no-cache allows a copy but requires revalidation before use.",
			"An ETag is a validator: the client sends it back in If-None-Match and gets 304 when nothing changed.",
			"Private data should be marked private so shared caches do not keep it.",
			"Short max-age values with revalidation give most of the benefit with little staleness."},
		code: "Cache-Control: private, max-age=60, must-revalidate\nETag: \"3f2a1b\""},
	{name: "testing strategy", qs: []string{"How many integration tests versus unit tests should we have?", "Are mocks a code smell?", "How do I make flaky tests less flaky?"},
		points: []string{"Unit tests are cheap and precise; integration tests catch wiring mistakes that unit tests cannot see.",
			"Mocking what you do not own tends to make tests pass while production breaks.",
			"Most flakiness comes from time, ordering, shared state and real network calls.",
			"Quarantining a flaky test is better than retrying it silently forever."},
		code: ""},
	{name: "memory management", qs: []string{"How does a generational garbage collector work?", "What is escape analysis?", "Why does my process RSS not go down after freeing memory?"},
		points: []string{"Generational collectors assume most objects die young and collect the young generation often and cheaply.",
			"Escape analysis lets the compiler keep values on the stack when they do not outlive the function.",
			"Allocators often keep freed pages to reuse them, so RSS lags behind the live heap.",
			"Returning memory to the OS is done lazily, for example with madvise, to avoid churn."},
		code: ""},
	{name: "API design", qs: []string{"Should I use PUT or PATCH for partial updates?", "How should I version a public REST API?", "Is it OK to return 200 with an error body?"},
		points: []string{"PATCH is meant for partial changes; PUT replaces the whole resource.",
			"Versioning in the URL path is the most visible; header-based versioning keeps URLs stable.",
			"Status codes let clients and proxies react without parsing the body, so errors should use 4xx or 5xx.",
			"Adding fields is usually backwards compatible; removing or renaming them is not."},
		code: "PATCH /v1/invoices/42\nContent-Type: application/merge-patch+json\n\n{\"status\": \"paid\"}"},
}

// answer is a reply built from the topic's points.
func (t *qaTopic) answer(s *sess) string {
	r := s.rng
	pts := pickN(r, t.points, between(r, 2, len(t.points)))
	var b strings.Builder
	b.WriteString(pts[0] + "\n\n")
	if len(pts) > 2 && chance(r, 0.6) {
		for _, p := range pts[1:] {
			b.WriteString("- " + p + "\n")
		}
	} else {
		b.WriteString(strings.Join(pts[1:], " ") + "\n")
	}
	if t.code != "" && chance(r, 0.5) {
		b.WriteString("\nFor example:\n\n```\n" + t.code + "\n```\n")
	}
	if chance(r, 0.4) {
		b.WriteString("\n" + pick(r, []string{"In short: pick the simpler option unless you have measurements.", "Happy to go deeper on any of these.", "It depends on your workload more than on the tool."}))
	}
	return b.String()
}
