"""recallbench's cost profile at 10k, 30k and 100k chunks: `python -m perf` (`nox -s perf`).

Tooling that measures the product from the outside, not a layer of it: it reads the engine only through
its public API (`engine.memory.Memory`, `engine.api`), builds arms through `arms.registry`, and runs the
application's hook and server as commands. One module per measurement:

- `perf.corpus`: generate, import and fill the synthetic corpora, pick the queries;
- `perf.ingest`: `import_paths` against raw encode, and the query-embedding cost;
- `perf.arms`: per-arm latency with the query embedding excluded;
- `perf.lexical`: FTS5 against rank-bm25, and the in-memory lexical index against FTS5;
- `perf.vectors`: hnswlib against an exact numpy scan (recall@10, an ef sweep);
- `perf.bootstrap`, `perf.search_process`, `perf.hooks`: the paired bootstrap, the peak memory of a
  search process, the UserPromptSubmit hook end to end;
- `perf.real_tier`, `perf.vector_cache`: the real-vector tier, its vectors cached by content hash
  between runs;
- `perf.cli_search`, `perf.child_usage`: `recallbench search` end to end with and without a server,
  each process's wall time and peak memory;
- `perf.embed_rates`: a fresh ONNX process's query embedding, and torch vs ONNX encode rates;
- `perf.run` ties them together, `perf.targets` judges the issue's targets, `perf.report` (with
  `perf.report_sections`) prints the table and writes `perf.json`, `perf.cli` is the command line.
"""
