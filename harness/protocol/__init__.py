"""Pre-registration protocols: the typed model, loading and hashing, and the lock.

A protocol is a TOML file (``protocols/<x>.toml``) validated by ``harness/schemas/
protocol.schema.json`` and then cross-checked (gates name existing rosters, arms and subsets; ship
rules name existing gates). Registration writes ``protocols/<x>.lock.json`` beside it, holding the
protocol's hash, the roster seals, the corpus manifest hash, the pinned embedder id, the time and the
git commit. A run refuses a protocol whose lock is missing or no longer matches, or whose pinned
embedder is not the one it would use, unless a deviation is declared.

Two hashes are kept:

* the **canonical** sha256 -- of the parsed TOML written as canonical JSON (sorted keys, no
  whitespace) -- is what the lock compares. Re-indenting the file, reordering keys or editing a
  comment does not change what was pre-registered, so it must not read as a deviation; changing
  any value (a margin, a reading, an arm) does, and changes this hash.
* the **raw** sha256 of the file's bytes is recorded too, so the exact file can be identified.

The modules:

* ``harness.protocol.model``: the frozen values a protocol parses into, checked as they are built;
* ``harness.protocol.load``: read, schema-validate, cross-check and hash a protocol file;
* ``harness.protocol.lock``: register, amend and verify ``<protocol>.lock.json``;
* ``harness.protocol.embedder``: embedder registry names, the ids they report, the live embedder.
"""
