//! heapdb: an in-process SQL database whose storage and executor follow
//! PostgreSQL's heap design.
//!
//! The layers, top to bottom. Each module names only modules below it
//! (`python3 tools/module-graph.py` checks; the one exception is `access`
//! and `wal`, which use each other as PostgreSQL's resource managers do: the
//! heap logs its changes through the WAL, and recovery replays them through
//! the heap's redo functions). `docs/architecture.md` draws the same layers
//! with a statement's path through them.
//!
//! - [`shell`]: the psql-style client: line editing, meta-commands, result
//!   printing. It reaches the engine only through `session`'s API (plus the
//!   `error`, `settings` and `types` values that API hands out), as a
//!   wire-protocol server would.
//! - [`session`]: the embedded API. A [`Session`] parses and dispatches
//!   statements and holds the transaction state and the session's
//!   settings. It looks up and locks the tables a statement names and hands
//!   the work below with a context filled from its transaction: COPY to
//!   [`copy`], INSERT/UPDATE/DELETE to [`plan`] and [`exec`] (the rows to
//!   write planned by `plan::modify`, written by `exec::modify`), the index
//!   commands to [`commands`].
//! - [`database`]: the shared instance: buffer pool, WAL writer,
//!   checkpointer, catalog, directory lock; opened once per data directory.
//! - [`copy`]: COPY's execution (loading records into heap pages, writing
//!   a table's tuples or a query's batches) and its text and CSV formats.
//!   What it needs from the statement comes as explicit values
//!   ([`copy::CopyContext`], the table its caller looked up and locked),
//!   so any client API can run it.
//! - [`commands`]: VACUUM and ANALYZE over whole heaps, and their
//!   statistics; CREATE/DROP INDEX, REINDEX and ALTER TABLE's constraints
//!   ([`commands::context::DdlContext`]); the B-tree inspection functions.
//! - [`plan`]: binding and planning, from the parser's AST to a plan tree
//!   (for INSERT/UPDATE/DELETE: the rows to write); EXPLAIN. It asks the
//!   executor to fold constants and which fast paths apply.
//! - [`exec`]: the executor: operators over batches, expression evaluation,
//!   the typed fast paths (`exec/fastpath`), spilling hash tables; writing
//!   DML's rows and their index entries ([`exec::modify::ModifyContext`]).
//! - [`nodes`]: the trees the planner builds and the executor runs: plan
//!   nodes, and the bound expressions of [`expr`] re-exported.
//! - [`vector`]: column vectors and batches, key sets: the data the
//!   executor moves.
//! - [`catalog`]: tables, columns, indexes, views and statistics, versioned
//!   by transaction.
//! - [`expr`]: bound expressions (below the catalog, which keeps a partial
//!   index's bound predicate).
//! - [`access`] and [`wal`]: heap tuples and pages, visibility, the
//!   visibility map, B-trees; the write-ahead log, checkpoints and crash
//!   recovery.
//! - [`txn`]: transaction ids, the commit log, snapshots, locks.
//! - [`storage`]: 8 KiB pages, segment files, the buffer pool.
//! - [`settings`], [`types`]: the settings and their defaults; SQL values,
//!   type ids, text input and output, comparison, hashing.
//! - [`error`]: the one error type, with PostgreSQL SQLSTATE codes.

pub mod access;
pub mod catalog;
pub mod commands;
pub mod copy;
pub mod database;
pub mod error;
pub mod exec;
pub mod expr;
pub mod nodes;
pub mod plan;
pub mod session;
pub mod settings;
pub mod shell;
pub mod storage;
pub mod txn;
pub mod types;
pub mod vector;
pub mod wal;

pub use database::Database;
pub use error::{Error, Result, SqlState};
pub use session::{QueryResult, Session};
