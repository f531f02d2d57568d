"""Word tables for the synthetic corpus: project profiles, paraphrase pairs, and the planted-fact pools.

The pools are kept disjoint on purpose: the words that build multi-hop identifiers never occur in
filler text, decision paraphrases share no content word with their canonical wording, and incident
triggers are used once each, so every gold answer is unique by construction.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, kw_only=True)
class Component:
    """A part of a project: its everyday name, a paraphrase with no shared content word, its file."""

    name: str
    paraphrase: str
    path: str  # relative to the project root


@dataclass(frozen=True, kw_only=True)
class Profile:
    """One synthetic project."""

    slug: str
    cwd: str
    language: str  # python | typescript | rust | go
    components: tuple[Component, ...]
    extra_files: tuple[str, ...]
    manifest: str  # pyproject.toml, package.json, Cargo.toml, go.mod
    libraries: tuple[tuple[str, str], ...]
    test_command: str
    commit_objects: tuple[str, ...]
    branches: tuple[str, ...]


PROFILES: tuple[Profile, ...] = (
    Profile(
        slug="ledger-api",
        cwd="/home/dana/work/ledger-api",
        language="python",
        components=(
            Component(
                name="webhook dispatcher",
                paraphrase="the piece that notifies merchants whenever balances move",
                path="src/ledger_api/webhooks/dispatcher.py",
            ),
            Component(
                name="reconciliation job",
                paraphrase="the nightly task matching our books against bank statements",
                path="src/ledger_api/recon/job.py",
            ),
            Component(
                name="idempotency middleware",
                paraphrase="the layer stopping replayed requests from charging twice",
                path="src/ledger_api/http/idempotency.py",
            ),
            Component(
                name="FX rate cache",
                paraphrase="the store of currency conversion quotes kept between lookups",
                path="src/ledger_api/fx/rates.py",
            ),
            Component(
                name="audit log writer",
                paraphrase="the component recording who changed what, for compliance",
                path="src/ledger_api/audit/writer.py",
            ),
            Component(
                name="postings API",
                paraphrase="the endpoints that create double-entry records",
                path="src/ledger_api/api/postings.py",
            ),
            Component(
                name="rate limiter",
                paraphrase="the throttle guarding public routes",
                path="src/ledger_api/http/ratelimit.py",
            ),
            Component(
                name="statement exporter",
                paraphrase="the module producing downloadable monthly account summaries",
                path="src/ledger_api/export/statements.py",
            ),
        ),
        extra_files=(
            "tests/test_postings.py",
            "tests/test_webhooks.py",
            "tests/test_recon.py",
            "src/ledger_api/settings.py",
            "alembic/env.py",
        ),
        manifest="pyproject.toml",
        libraries=(
            ("fastapi", "0.115.6"),
            ("sqlalchemy", "2.0.36"),
            ("alembic", "1.14.0"),
            ("pydantic", "2.10.4"),
            ("httpx", "0.28.1"),
            ("celery", "5.4.0"),
            ("redis", "5.2.1"),
            ("structlog", "24.4.0"),
        ),
        test_command="uv run pytest -q",
        commit_objects=(
            "idempotency key lookup",
            "webhook signature check",
            "settlement file parser",
            "FX rate refresh",
            "posting reversal endpoint",
            "audit trail export",
            "ledger balance query",
            "rate limit headers",
            "statement PDF renderer",
            "currency rounding",
            "merchant payout batch",
            "refund state machine",
            "journal entry migration",
            "pagination on /postings",
            "OpenAPI schema for transfers",
            "bank API client",
            "duplicate webhook suppression",
            "account freeze flag",
            "ledger snapshot task",
            "chargeback handler",
        ),
        branches=("main", "feat/payouts", "fix/recon-drift", "main"),
    ),
    Profile(
        slug="pixel_forge",
        cwd="/Users/mika/code/pixel_forge",
        language="typescript",
        components=(
            Component(
                name="thumbnail worker",
                paraphrase="the background process shrinking uploaded pictures",
                path="src/workers/thumbnail.ts",
            ),
            Component(
                name="upload handler",
                paraphrase="the route that receives user images",
                path="src/http/upload.ts",
            ),
            Component(
                name="S3 presigner",
                paraphrase="the code minting temporary bucket URLs",
                path="src/storage/presign.ts",
            ),
            Component(
                name="CDN purge hook",
                paraphrase="the piece invalidating edge-cached assets after changes",
                path="src/cdn/purge.ts",
            ),
            Component(
                name="EXIF stripper",
                paraphrase="the step removing camera metadata from photos",
                path="src/pipeline/exif.ts",
            ),
            Component(
                name="render queue consumer",
                paraphrase="the loop pulling pending image jobs",
                path="src/queue/consumer.ts",
            ),
            Component(
                name="color profile converter",
                paraphrase="the stage translating embedded ICC data into sRGB",
                path="src/pipeline/color.ts",
            ),
            Component(
                name="usage meter",
                paraphrase="the counter billing customers per processed picture",
                path="src/billing/meter.ts",
            ),
        ),
        extra_files=(
            "src/config.ts",
            "test/thumbnail.test.ts",
            "test/upload.test.ts",
            "tsconfig.json",
        ),
        manifest="package.json",
        libraries=(
            ("sharp", "0.33.5"),
            ("fastify", "5.2.0"),
            ("@aws-sdk/client-s3", "3.723.0"),
            ("bullmq", "5.34.6"),
            ("zod", "3.24.1"),
            ("vitest", "2.1.8"),
            ("pino", "9.6.0"),
        ),
        test_command="pnpm vitest run",
        commit_objects=(
            "thumbnail resize pipeline",
            "multipart upload limits",
            "presigned URL expiry",
            "CDN purge batching",
            "EXIF orientation handling",
            "queue consumer shutdown",
            "ICC profile conversion",
            "usage meter rollup",
            "WebP encoder settings",
            "upload MIME sniffing",
            "S3 key layout",
            "animated GIF frames",
            "job progress events",
            "sharp concurrency setting",
            "image dimension guard",
            "billing export CSV",
            "retry of failed renders",
            "signed cookie auth",
            "AVIF fallback",
            "health check route",
        ),
        branches=("main", "feat/avif", "main", "fix/exif"),
    ),
    Profile(
        slug="mapkit.web",
        cwd="/home/dana/src/mapkit.web",
        language="typescript",
        components=(
            Component(
                name="tile loader",
                paraphrase="the fetcher pulling map squares from the server",
                path="src/map/tileLoader.ts",
            ),
            Component(
                name="geocoder client",
                paraphrase="the wrapper turning street addresses into coordinates",
                path="src/services/geocoder.ts",
            ),
            Component(
                name="service worker",
                paraphrase="the browser script keeping things usable offline",
                path="src/sw/serviceWorker.ts",
            ),
            Component(
                name="vector layer renderer",
                paraphrase="the canvas code drawing roads and borders",
                path="src/map/vectorLayer.ts",
            ),
            Component(
                name="i18n bundle loader",
                paraphrase="the fetcher of translated interface strings",
                path="src/i18n/loader.ts",
            ),
            Component(
                name="search autocomplete",
                paraphrase="the type-ahead suggesting places while someone types",
                path="src/search/autocomplete.tsx",
            ),
            Component(
                name="analytics beacon",
                paraphrase="the usage telemetry pings",
                path="src/telemetry/beacon.ts",
            ),
            Component(
                name="route planner panel",
                paraphrase="the sidebar computing driving directions",
                path="src/ui/RoutePanel.tsx",
            ),
        ),
        extra_files=(
            "src/main.tsx",
            "vite.config.ts",
            "test/tileLoader.test.ts",
            "test/geocoder.test.ts",
        ),
        manifest="package.json",
        libraries=(
            ("react", "19.0.0"),
            ("vite", "6.0.7"),
            ("maplibre-gl", "4.7.1"),
            ("@tanstack/react-query", "5.62.11"),
            ("i18next", "24.2.0"),
            ("workbox-window", "7.3.0"),
            ("playwright", "1.49.1"),
        ),
        test_command="npm test -- --run",
        commit_objects=(
            "tile cache eviction",
            "geocoder debounce",
            "offline tile precache",
            "vector layer hit testing",
            "locale fallback chain",
            "autocomplete keyboard navigation",
            "beacon batching",
            "route panel layout",
            "retina tile selection",
            "map attribution footer",
            "zoom level clamping",
            "dark mode style sheet",
            "geolocation permission prompt",
            "search result ranking",
            "service worker update flow",
            "bundle splitting for the map chunk",
            "RTL layout for Arabic",
            "marker clustering",
            "URL state sync",
            "print view",
        ),
        branches=("main", "feat/offline", "main", "fix/rtl"),
    ),
    Profile(
        slug="queue-runner",
        cwd="/Users/mika/projects/queue-runner",
        language="rust",
        components=(
            Component(
                name="scheduler loop",
                paraphrase="the core deciding when each job fires",
                path="src/scheduler.rs",
            ),
            Component(
                name="lease manager",
                paraphrase="the bookkeeping that grants workers exclusive ownership of tasks",
                path="src/lease.rs",
            ),
            Component(
                name="shard rebalancer",
                paraphrase="the logic redistributing partitions as nodes join or leave",
                path="src/rebalance.rs",
            ),
            Component(
                name="metrics exporter",
                paraphrase="the endpoint exposing counters for scraping",
                path="src/metrics.rs",
            ),
            Component(
                name="config loader",
                paraphrase="the startup code reading settings files",
                path="src/config.rs",
            ),
            Component(
                name="retry policy",
                paraphrase="the rules governing repeated attempts after failure",
                path="src/retry.rs",
            ),
            Component(
                name="worker heartbeat",
                paraphrase="the periodic liveness ping from each executor",
                path="src/heartbeat.rs",
            ),
            Component(
                name="admin CLI",
                paraphrase="the operator command-line tool",
                path="src/bin/qr-admin.rs",
            ),
        ),
        extra_files=("src/main.rs", "tests/scheduler.rs", "tests/lease.rs", "src/lib.rs"),
        manifest="Cargo.toml",
        libraries=(
            ("tokio", "1.42.0"),
            ("serde", "1.0.217"),
            ("sqlx", "0.8.3"),
            ("tracing", "0.1.41"),
            ("clap", "4.5.23"),
            ("prometheus", "0.13.4"),
            ("anyhow", "1.0.95"),
        ),
        test_command="cargo test",
        commit_objects=(
            "lease renewal",
            "shard rebalance planner",
            "scheduler tick drift",
            "metrics label cardinality",
            "config reload on SIGHUP",
            "retry jitter",
            "heartbeat timeout",
            "admin drain command",
            "job priority queue",
            "graceful shutdown",
            "sqlx connection options",
            "cron expression parser",
            "dead worker reaping",
            "lease fencing tokens",
            "histogram buckets",
            "partition ownership map",
            "job payload size check",
            "tracing span fields",
            "clap subcommand help",
            "backpressure on enqueue",
        ),
        branches=("main", "feat/fencing", "main", "perf/scheduler"),
    ),
    Profile(
        slug="deploy_bot",
        cwd="/home/dana/work/deploy_bot",
        language="go",
        components=(
            Component(
                name="Slack command router",
                paraphrase="the handler for chat slash commands",
                path="internal/slack/router.go",
            ),
            Component(
                name="deploy orchestrator",
                paraphrase="the coordinator rolling releases across clusters",
                path="internal/deploy/orchestrator.go",
            ),
            Component(
                name="GitHub webhook receiver",
                paraphrase="the listener for repository push events",
                path="internal/github/webhook.go",
            ),
            Component(
                name="rollback planner",
                paraphrase="the logic choosing which release to restore",
                path="internal/deploy/rollback.go",
            ),
            Component(
                name="approval gate",
                paraphrase="the check requiring a second person before production",
                path="internal/policy/approval.go",
            ),
            Component(
                name="status poller",
                paraphrase="the loop watching cluster health after a release",
                path="internal/k8s/poller.go",
            ),
            Component(
                name="audit exporter",
                paraphrase="the job shipping action history to the warehouse",
                path="internal/audit/export.go",
            ),
            Component(
                name="secrets fetcher",
                paraphrase="the client reading credentials out of the vault",
                path="internal/secrets/fetch.go",
            ),
        ),
        extra_files=(
            "cmd/deploy-bot/main.go",
            "internal/deploy/orchestrator_test.go",
            "internal/slack/router_test.go",
            "Makefile",
        ),
        manifest="go.mod",
        libraries=(
            ("github.com/slack-go/slack", "v0.15.0"),
            ("github.com/google/go-github/v68", "v68.0.0"),
            ("k8s.io/client-go", "v0.32.0"),
            ("go.uber.org/zap", "v1.27.0"),
            ("github.com/stretchr/testify", "v1.10.0"),
        ),
        test_command="go test ./...",
        commit_objects=(
            "slash command parsing",
            "rollout wave sizes",
            "push event filtering",
            "rollback target selection",
            "approval expiry",
            "pod readiness polling",
            "audit export schedule",
            "vault token renewal",
            "deploy lock",
            "Slack message formatting",
            "cluster context switching",
            "dry-run mode",
            "release notes generation",
            "canary health thresholds",
            "GitHub check runs",
            "helm values merge",
            "kubeconfig loading",
            "deploy history command",
            "rate limiting of Slack posts",
            "image tag validation",
        ),
        branches=("main", "feat/approvals", "main", "fix/poller"),
    ),
    Profile(
        slug="notes-sync.app",
        cwd="/Users/mika/code/notes-sync.app",
        language="python",
        components=(
            Component(
                name="sync engine",
                paraphrase="the machinery keeping devices in agreement",
                path="notes_sync/sync/engine.py",
            ),
            Component(
                name="conflict resolver",
                paraphrase="the code picking a winner when two edits collide",
                path="notes_sync/sync/conflicts.py",
            ),
            Component(
                name="attachment store",
                paraphrase="the storage for images and files hanging off notes",
                path="notes_sync/storage/attachments.py",
            ),
            Component(
                name="search indexer",
                paraphrase="the job making note text findable",
                path="notes_sync/search/indexer.py",
            ),
            Component(
                name="token refresher",
                paraphrase="the routine renewing login credentials before expiry",
                path="notes_sync/auth/refresh.py",
            ),
            Component(
                name="push notifier",
                paraphrase="the sender of mobile alerts",
                path="notes_sync/notify/push.py",
            ),
            Component(
                name="markdown exporter",
                paraphrase="the feature writing notes out as plain-text files",
                path="notes_sync/export/markdown.py",
            ),
            Component(
                name="schema migrator",
                paraphrase="the upgrader for the local database layout",
                path="notes_sync/db/migrate.py",
            ),
        ),
        extra_files=(
            "tests/test_sync.py",
            "tests/test_conflicts.py",
            "notes_sync/config.py",
            "notes_sync/cli.py",
        ),
        manifest="pyproject.toml",
        libraries=(
            ("sqlalchemy", "2.0.36"),
            ("pydantic", "2.10.4"),
            ("httpx", "0.28.1"),
            ("apscheduler", "3.11.0"),
            ("tantivy", "0.22.0"),
            ("typer", "0.15.1"),
        ),
        test_command="python -m pytest -q",
        commit_objects=(
            "vector clock merge",
            "three-way note merge",
            "attachment dedup by hash",
            "index rebuild command",
            "refresh token rotation",
            "APNs payload size",
            "markdown front matter",
            "schema version table",
            "tombstone compaction",
            "offline queue replay",
            "note title search",
            "export of nested folders",
            "sync cursor persistence",
            "device registration",
            "attachment thumbnail cache",
            "conflict copy naming",
            "CLI login flow",
            "sqlite busy timeout",
            "push badge count",
            "trash retention",
        ),
        branches=("main", "feat/merge", "main", "fix/tokens"),
    ),
)

# ---------------------------------------------------------------------------------------------
# Commits: verb forms (imperative, past, gerund, conventional-commit type) and qualifiers.

COMMIT_VERBS: tuple[tuple[str, str, str, str], ...] = (
    ("fix", "fixed", "fixing", "fix"),
    ("add", "added", "adding", "feat"),
    ("handle errors in", "handled errors in", "handling errors in", "fix"),
    ("guard", "guarded", "guarding", "fix"),
    ("cache", "cached", "caching", "perf"),
    ("validate", "validated", "validating", "feat"),
    ("log", "logged", "logging", "chore"),
    ("speed up", "sped up", "speeding up", "perf"),
    ("simplify", "simplified", "simplifying", "refactor"),
    ("harden", "hardened", "hardening", "fix"),
    ("document", "documented", "documenting", "docs"),
    ("test", "tested", "testing", "test"),
    ("rework", "reworked", "reworking", "refactor"),
    ("instrument", "instrumented", "instrumenting", "chore"),
    ("retry", "retried", "retrying", "fix"),
    ("split", "split", "splitting", "refactor"),
)

COMMIT_QUALIFIERS: tuple[str, ...] = (
    "when the payload is empty",
    "for multi-tenant accounts",
    "under concurrent requests",
    "after a restart",
    "on the first request after deploy",
    "for legacy clients",
    "with a clearer error message",
    "behind a feature flag",
    "in the nightly run",
    "for negative amounts",
    "during DST transitions",
    "when upstream returns 429",
    "with structured context",
    "for large batches",
    "without blocking the event loop",
    "on retry",
    "in the admin view",
    "for unicode input",
    "when the config is missing",
    "across time zones",
    "for zero-length inputs",
    "with a bounded queue",
)

# ---------------------------------------------------------------------------------------------
# Standalone decisions: canonical wording in the corpus, paraphrase in the question.
# Each pair shares no content word (checked by the tests through the overlap figure).

DECISION_CHOICES: tuple[tuple[str, str], ...] = (
    ("Redis", "an in-memory key-value server"),
    ("Postgres advisory locks", "database-level mutual exclusion primitives"),
    ("SQLite in WAL mode", "an embedded file database with write-ahead journaling"),
    ("msgpack", "a compact binary serialisation format"),
    ("protobuf", "schema-first binary messages generated from IDL files"),
    ("gRPC", "an HTTP/2 remote procedure call framework"),
    ("server-sent events", "one-way streaming pushes over plain HTTP"),
    ("WebSockets", "a persistent bidirectional socket channel"),
    ("a token bucket", "a refilling allowance of requests per client"),
    ("structured JSON logging", "machine-readable log records"),
    ("OpenTelemetry tracing", "vendor-neutral distributed spans"),
    ("Unleash feature flags", "remote toggles served by a self-hosted switchboard"),
    ("a Celery worker pool", "a distributed task runner framework"),
    ("host-level cron", "a time-based scheduler on the machine itself"),
    ("S3 lifecycle rules", "object-store expiry policies"),
    ("blue-green deploys", "two identical production stacks swapped at cutover"),
    ("canary releases", "shipping to a small slice of traffic first"),
    (
        "optimistic locking with a version column",
        "conflict detection through a revision counter on each row",
    ),
    ("UUIDv7 primary keys", "time-ordered random identifiers for every row"),
    ("Bloom filters", "probabilistic membership sets that may report false positives"),
    ("LRU eviction", "discarding whatever was touched longest ago"),
    ("Zod schemas", "runtime type validators declared alongside the code"),
    ("Playwright end-to-end tests", "headless browser automation suites"),
    ("pnpm workspaces", "a single repository linking packages through the package manager"),
    ("vendoring the dependency", "copying third-party source into our own tree"),
    ("HMAC request signatures", "keyed-hash authentication codes on payloads"),
    ("mutual TLS", "certificates presented by both ends of the connection"),
    ("a dead-letter queue", "a holding area for messages that keep failing"),
    ("circuit breakers", "automatic cut-offs after repeated downstream failures"),
    ("ULID request IDs", "sortable unique tags attached to each call"),
    ("zstd compression", "a fast modern squeezing codec for stored blobs"),
    ("a read replica", "a secondary copy serving queries"),
    ("PgBouncer connection pooling", "a proxy multiplexing many clients onto few server links"),
    ("property-based testing", "randomised input generation that hunts for counterexamples"),
    ("signed URLs", "expiring links carrying a cryptographic proof"),
    (
        "a transactional outbox",
        "writing events to a table in the same commit and relaying them later",
    ),
)

DECISION_REASONS: tuple[tuple[str, str], ...] = (
    (
        "because p99 latency doubled under load",
        "since tail response times got twice as slow at peak traffic",
    ),
    (
        "because the current approach leaks memory on long runs",
        "as the existing setup kept growing its heap over multi-day uptimes",
    ),
    ("to cut the AWS bill", "to spend less on cloud hosting"),
    (
        "because on-call kept getting paged at night",
        "after repeated overnight alerts woke the rota",
    ),
    ("so that retries are safe", "making repeated attempts harmless"),
    ("because the SOC 2 audit requires it", "to satisfy the compliance review"),
    (
        "because debugging production issues took hours",
        "since diagnosing live incidents was painfully slow",
    ),
    (
        "because the old setup lost data during failover",
        "as the previous arrangement dropped writes when the primary switched",
    ),
    ("to keep CI under ten minutes", "so the pipeline finishes quickly"),
    (
        "because two customers hit race conditions last week",
        "after a pair of clients saw concurrent-update bugs recently",
    ),
    ("to simplify onboarding for new engineers", "so newcomers ramp up faster"),
    (
        "because the vendor is sunsetting the old API",
        "since the supplier is retiring its legacy interface",
    ),
    ("to avoid lock-in with a single provider", "to stay portable between clouds"),
    (
        "because mobile clients have flaky connections",
        "since phones drop off the network constantly",
    ),
    ("to make incidents easier to replay", "so outages can be reproduced afterwards"),
    ("because payloads grew past 2 MB", "as message bodies became huge"),
)

DECISION_VERBS: tuple[str, ...] = ("adopt", "go with", "standardise on", "switch to", "move to")

DECISION_QUESTION_TEMPLATES: tuple[str, ...] = (
    "Which conversation picked {choice} for {component}, {reason}?",
    "When did we settle on {choice} as the approach in {component}, {reason}?",
    "Find where the team chose {choice} for {component} — {reason}.",
    "Remind me where we agreed to rely on {choice} in {component}, {reason}.",
    "Where did we land on {choice} for {component}, {reason}?",
)

# ---------------------------------------------------------------------------------------------
# Temporal chains: an aspect of a component whose decision is revised; options never repeat
# a standalone decision's canonical choice.

TEMPORAL_ASPECTS: tuple[tuple[str, tuple[str, str, str]], ...] = (
    (
        "retry backoff",
        (
            "exponential backoff capped at five minutes",
            "a fixed thirty-second interval",
            "jittered exponential backoff with at most ten attempts",
        ),
    ),
    (
        "log retention",
        (
            "14 days in hot storage",
            "90 days with cold archival after a week",
            "7 days and nothing archived",
        ),
    ),
    (
        "deploy window",
        (
            "Tuesday and Thursday mornings only",
            "any weekday before 3pm",
            "continuous deploys on every merge to main",
        ),
    ),
    (
        "API versioning scheme",
        (
            "path prefixes like /v2",
            "an Accept-Version request header",
            "date-stamped versions in a header",
        ),
    ),
    ("error tracking service", ("Sentry", "self-hosted GlitchTip", "error events written to Loki")),
    (
        "test database strategy",
        (
            "in-memory SQLite for unit tests",
            "a throwaway Postgres container per run",
            "one shared Postgres schema per CI worker",
        ),
    ),
    (
        "feature rollout policy",
        (
            "10% canary then everyone",
            "internal staff first, then all users",
            "region by region starting with the EU",
        ),
    ),
    (
        "pagination style",
        ("offset and limit parameters", "opaque cursor tokens", "keyset pagination on created_at"),
    ),
    (
        "cache invalidation rule",
        (
            "time-based expiry only",
            "explicit purge on every write",
            "versioned cache keys bumped on deploy",
        ),
    ),
    (
        "dependency update cadence",
        (
            "Renovate in weekly batches",
            "Dependabot daily pull requests",
            "a manual bump at the start of each month",
        ),
    ),
    (
        "branching model",
        (
            "trunk-based development",
            "long-lived release branches",
            "GitFlow with develop and release branches",
        ),
    ),
    (
        "timestamp storage format",
        (
            "UTC everywhere, converted at the edge",
            "local time plus an explicit offset",
            "Unix epoch milliseconds as integers",
        ),
    ),
    (
        "secrets storage",
        (
            "AWS Secrets Manager",
            "SOPS-encrypted files in the repo",
            "HashiCorp Vault with short-lived tokens",
        ),
    ),
    (
        "code review rule",
        (
            "one approval from any engineer",
            "two approvals including a code owner",
            "pairing instead of async review",
        ),
    ),
    (
        "alerting threshold",
        (
            "page when errors exceed 1% for five minutes",
            "page at 5% over one minute",
            "tickets only, no pages below 10%",
        ),
    ),
    (
        "config file format",
        ("TOML files", "environment variables only", "YAML validated by a JSON Schema"),
    ),
)

TEMPORAL_REASONS: tuple[str, ...] = (
    "it kept waking on-call",
    "the staging soak showed it does not hold up",
    "the security review flagged it",
    "it doubled our storage costs",
    "customers complained about stale data",
    "it made local development painful",
    "the vendor changed their pricing",
    "we saw duplicate processing in production",
    "it hid real failures",
    "the team found it confusing during incidents",
    "it broke the mobile release train",
    "the load test fell over at twice today's traffic",
)

TEMPORAL_QUESTION_TEMPLATES: tuple[str, ...] = (
    "What is the current decision on the {aspect} for the {component}?",
    "What did we finally settle on for the {aspect} of the {component}?",
    "As things stand now, what is our {aspect} for the {component}?",
    "Which {aspect} does the {component} use after the latest change of mind?",
)

# ---------------------------------------------------------------------------------------------
# Multi-hop: identifier words (never used anywhere else) and dedicated file stems.

HOP_VERBS: tuple[str, ...] = (
    "quiesce",
    "rehydrate",
    "coalesce",
    "amortize",
    "defragment",
    "reap",
    "stitch",
    "unwind",
    "requeue",
    "rebaseline",
    "hoist",
    "sift",
    "thaw",
    "winnow",
    "splice",
    "deskew",
)
HOP_ADJECTIVES: tuple[str, ...] = (
    "stale",
    "orphaned",
    "dangling",
    "straggling",
    "lapsed",
    "dormant",
    "spurious",
    "shadowed",
    "detached",
    "overdue",
    "torn",
    "phantom",
)
HOP_NOUNS: tuple[str, ...] = (
    "watermarks",
    "cursors",
    "fragments",
    "epochs",
    "tallies",
    "quorums",
    "husks",
    "spools",
    "stragglers",
    "crumbs",
    "remnants",
    "vouchers",
)
HOP_FILE_HEADS: tuple[str, ...] = (
    "window",
    "span",
    "slot",
    "drift",
    "bucket",
    "range",
    "tick",
    "seq",
    "ring",
    "lane",
    "offset",
    "gap",
    "phase",
    "grid",
    "arc",
    "band",
)
HOP_FILE_TAILS: tuple[str, ...] = (
    "math",
    "table",
    "map",
    "guard",
    "plan",
    "ops",
    "clock",
    "util",
    "book",
    "fill",
    "gate",
    "walk",
    "kit",
    "calc",
)
HOP_PURPOSES: tuple[str, ...] = (
    "clears out entries nobody has touched since the last sweep",
    "walks the pending set and drops anything past its deadline",
    "merges adjacent records so the next pass has less to scan",
    "rebuilds the in-memory view from the persisted rows on startup",
    "moves leftovers back into the work set after a crash",
    "trims the backlog down to the configured ceiling",
)

# Parameters tuned in filler and in multi-hop B sessions: (spoken name, constant, values, unit).
PARAMS: tuple[tuple[str, str, tuple[int, ...], str], ...] = (
    ("batch size", "BATCH_SIZE", (50, 100, 200, 250, 500, 1000), ""),
    ("retry limit", "MAX_RETRIES", (2, 3, 5, 8, 10, 12), ""),
    ("timeout", "TIMEOUT_SECONDS", (5, 10, 15, 30, 45, 60, 90), " seconds"),
    ("cache TTL", "CACHE_TTL_SECONDS", (60, 120, 300, 600, 900, 3600), " seconds"),
    ("pool size", "POOL_SIZE", (4, 8, 12, 16, 32), ""),
    ("page size", "PAGE_SIZE", (20, 25, 50, 100, 200), ""),
    ("flush interval", "FLUSH_INTERVAL_MS", (250, 500, 1000, 2000, 5000), " ms"),
    ("queue depth limit", "MAX_QUEUE_DEPTH", (64, 128, 256, 1024, 4096), ""),
)

HOP_QUESTION_TEMPLATES: tuple[str, ...] = (
    "What {param} did we end up with in the file where `{ident}` is defined?",
    "In the module that holds `{ident}`, what is the {param} set to?",
    "Which value was the {param} changed to in the file that defines `{ident}`?",
    "What {param} was chosen for the module containing `{ident}`?",
)

# ---------------------------------------------------------------------------------------------
# Cross-project negatives: incidents whose trigger is used exactly once in the corpus.

INCIDENT_ERRORS: tuple[str, ...] = (
    "ECONNRESET on the upstream socket",
    "OOMKilled (exit code 137)",
    "SIGSEGV in the image decoder",
    "deadlock detected from Postgres",
    "x509: certificate has expired or is not yet valid",
    "too many open files",
    "disk quota exceeded",
    "clock skew too great",
    "invalid byte sequence for encoding UTF8: 0x9c",
    "stack overflow in the recursive walker",
    "429 Too Many Requests from the upstream provider",
    "connection pool exhausted",
    "unexpected end of JSON input",
    "certificate verify failed: unable to get local issuer certificate",
    "no space left on device",
    "integer overflow while computing the offset",
    "context deadline exceeded",
    "broken pipe while streaming the response",
    "read-only file system",
    "lock wait timeout exceeded",
    "maximum call stack size exceeded",
    "EADDRINUSE on port 8080",
    "segfault in libvips",
    "SSL handshake aborted",
)

INCIDENT_TRIGGERS: tuple[str, ...] = (
    "the daylight-saving switch on Sunday",
    "a 2 GB upload from one customer",
    "the Redis failover drill",
    "the node pool upgrade",
    "a leap-day timestamp in the batch",
    "the TLS certificate rotation",
    "the Black Friday traffic spike",
    "the region failover test",
    "the Postgres minor version upgrade",
    "a deploy that overlapped the backup window",
    "importing a CSV exported from Excel",
    "the kernel patch rollout",
    "turning on HTTP/2 at the load balancer",
    "the first run after the schema migration",
    "a burst of retries from a partner integration",
    "moving the cron host to ARM",
    "a tenant sending 40k rows in one request",
    "the DNS provider outage",
    "switching the base image to Alpine",
    "the log volume filling up",
    "the New Year rollover",
    "enabling the new CDN edge rules",
    "the office network change",
    "rotating the database password",
    "the bulk re-index over the weekend",
    "bumping the runtime to the new LTS",
    "the marketing email blast",
    "a replayed webhook storm",
)

INCIDENT_QUESTION_TEMPLATES: tuple[str, ...] = (
    "Why did the {component} crash with {error} after {trigger}?",
    "What caused the {component} to fail with {error} following {trigger}?",
    "Root cause of the {component} outage ({error}) after {trigger}?",
)

# ---------------------------------------------------------------------------------------------
# Receipt recollections: how a user recalls a commit (never the verbatim message).

RECEIPT_QUESTION_TEMPLATES: tuple[str, ...] = (
    "the commit where we {past} {obj} {qual}",
    "which session {past} {obj} {qual}?",
    "{gerund} {obj} {qual} — which commit was that?",
    "find the change that {past} {obj} {qual}",
    "when did we commit the work {gerund} {obj} {qual}?",
)

# ---------------------------------------------------------------------------------------------
# Filler vocabulary (code identifiers, prose). Disjoint from the HOP_* pools.

CODE_VERBS: tuple[str, ...] = (
    "load",
    "parse",
    "build",
    "render",
    "apply",
    "compute",
    "fetch",
    "resolve",
    "normalize",
    "serialize",
    "validate",
    "merge",
    "flush",
    "collect",
    "format",
    "encode",
    "decode",
    "register",
    "lookup",
    "update",
    "create",
    "delete",
    "list",
    "schedule",
    "emit",
    "read",
    "write",
    "check",
    "prepare",
    "refresh",
)
CODE_NOUNS: tuple[str, ...] = (
    "entry",
    "record",
    "batch",
    "payload",
    "header",
    "config",
    "token",
    "account",
    "amount",
    "rate",
    "event",
    "message",
    "request",
    "response",
    "row",
    "page",
    "limit",
    "state",
    "result",
    "item",
    "key",
    "value",
    "path",
    "job",
    "task",
    "session",
    "user",
    "client",
    "buffer",
    "snapshot",
)
CONCERNS: tuple[str, ...] = (
    "error handling",
    "retries",
    "concurrency",
    "configuration",
    "logging",
    "startup and shutdown",
    "input validation",
    "caching",
    "authentication",
    "timeouts",
    "metrics",
    "backpressure",
)
SITUATIONS: tuple[str, ...] = (
    "the payload has no items",
    "two workers pick up the same job",
    "the config file is missing a section",
    "a request gets retried",
    "we run the load test",
    "the cache is cold",
    "it runs on the ARM runners",
    "the upstream responds slowly",
    "the input contains emoji",
    "the clock jumps forward",
    "the database is under maintenance",
    "a tenant has thousands of records",
)
LANG_ERRORS: dict[str, tuple[str, ...]] = {
    "python": (
        "TypeError: 'NoneType' object is not subscriptable",
        "KeyError: 'items'",
        "AttributeError: 'dict' object has no attribute 'model_dump'",
        "ValueError: invalid literal for int() with base 10: ''",
        "sqlalchemy.exc.IntegrityError: duplicate key value violates unique constraint",
        "RuntimeError: Event loop is closed",
        "pydantic_core._pydantic_core.ValidationError: 1 validation error",
        "TimeoutError: timed out waiting for connection",
    ),
    "typescript": (
        "TypeError: Cannot read properties of undefined (reading 'map')",
        "RangeError: Invalid time value",
        "Error: ENOENT: no such file or directory",
        "SyntaxError: Unexpected token < in JSON at position 0",
        "UnhandledPromiseRejection: fetch failed",
        "TypeError: x.toFixed is not a function",
        "ZodError: Expected number, received string",
        "Error: Request aborted",
    ),
    "rust": (
        "called `Option::unwrap()` on a `None` value",
        "error[E0502]: cannot borrow `self.queue` as mutable because it is also borrowed as immutable",
        "called `Result::unwrap()` on an `Err` value: PoolTimedOut",
        "attempt to subtract with overflow",
        "error[E0308]: mismatched types",
        "thread 'tokio-runtime-worker' panicked at 'index out of bounds'",
        "error: future cannot be sent between threads safely",
        "Error: missing field `interval_ms`",
    ),
    "go": (
        "panic: runtime error: invalid memory address or nil pointer dereference",
        "panic: assignment to entry in nil map",
        "context canceled",
        "json: cannot unmarshal string into Go struct field",
        "fatal error: concurrent map writes",
        "http: server closed idle connection",
        "undefined: deployCtx",
        "error: unexpected status 403 from API",
    ),
}
FIX_PHRASES: tuple[str, ...] = (
    "return early when the input is empty instead of indexing into it",
    "take the lock before reading the shared map",
    "parse the value once at startup and fail loudly if it is missing",
    "pass the deadline through instead of creating a fresh context",
    "copy the slice before mutating it",
    "normalise the timestamp to UTC before comparing",
    "check the status code before decoding the body",
    "close the connection in a finally block",
    "treat a missing header as the default instead of crashing",
    "move the retry outside the transaction",
)
BUG_CAUSES: tuple[str, ...] = (
    "we index into the first element without checking the list is non-empty",
    "two tasks read and write the same dict without a lock",
    "the default is only applied when the key exists but is null",
    "the retry reuses a context that has already been cancelled",
    "the loop mutates the slice it is iterating over",
    "the comparison mixes naive and aware timestamps",
    "the error body is decoded as if it were a success payload",
    "the connection is never released when the handler raises",
    "a missing header falls through to a cast on None",
    "the retry runs inside the same transaction, so it replays the failure",
)
FEATURES: tuple[str, ...] = (
    "a dry-run flag",
    "per-tenant limits",
    "a health endpoint",
    "a metrics counter for failures",
    "structured error responses",
    "a config option for the timeout",
    "pagination support",
    "a bulk variant of the endpoint",
    "request tracing headers",
    "a cleanup command",
    "better log messages",
    "an admin-only override",
)
PRIVATE_NOTES: tuple[str, ...] = (
    "my manager wants this shipped before the audit, do not mention it in the PR",
    "the customer in question is Northwind and they are threatening to churn",
    "salary bands for the new hire are in the shared sheet",
    "I am interviewing elsewhere so keep the handover notes tidy",
    "the vendor contract renewal is at risk this quarter",
    "legal asked us not to discuss the breach publicly yet",
    "my home address for the hardware shipment is 14 Elm Row",
    "the on-call swap with Priya is off the books",
)
OTHERMEM_NOTES: tuple[str, ...] = (
    "prefers small PRs with a checklist in the description",
    "uses pnpm locally, never npm",
    "wants test names written as sentences",
    "dislikes mocks for the database layer",
    "asks for a summary table after long investigations",
    "runs tests with -x before pushing",
    "likes commit messages in the imperative mood",
    "keeps TODOs out of main",
)

_STOPWORD_TEXT = """
    a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves it's we'll we've don't
    also via per each it was let lets us may might must shall its were s t ll ve re d m
    """
STOPWORDS: frozenset[str] = frozenset(_STOPWORD_TEXT.split())
