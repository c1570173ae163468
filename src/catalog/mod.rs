//! The catalog: which tables exist, their columns, and their statistics.
//!
//! PostgreSQL keeps its catalog in heap tables, so DDL is transactional for
//! free. heapdb keeps the same semantics with a small in-memory structure:
//! every table definition is a *version* with an `xmin` (the transaction that
//! created it) and an `xmax` (the one that dropped or replaced it), and a
//! lookup sees the versions its transaction's [`Snapshot`] would see, exactly
//! as for heap tuples. So `CREATE TABLE` inside `BEGIN` is invisible to other
//! sessions until `COMMIT`, disappears on `ROLLBACK`, and `TRUNCATE` (which
//! gives the table a new relfilenode, as PostgreSQL does) can be undone.
//!
//! Persistence: the whole catalog is written to the file `catalog` in the data
//! directory (temp file, fsync, rename, fsync of the directory) by the
//! transaction that changed it, *before* its commit is recorded in the commit
//! log. On open, versions whose `xmin` did not commit are dropped and `xmax`
//! of transactions that did not commit is cleared, so the file never has to
//! be rewritten at abort and a crash at any point leaves a consistent
//! catalog. (The write-ahead log will replace the whole-file rewrite by log
//! records.)
//!
//! Temporary tables (`CREATE TEMP TABLE`) are versions like any other,
//! tagged with the temporary namespace of the session that made them
//! (PostgreSQL's `pg_temp_N`, N from 1, the smallest free one): only a view
//! of that namespace ([`CatalogView::temp_ns`]) sees them, and a lookup
//! finds them before a permanent table of the same name (PostgreSQL puts
//! `pg_temp` first in the search path). They are written to the file like
//! every version, so that the open after a crash finds them and drops them
//! ([`Catalog::temp_relation_files`], [`Catalog::forget_temp`]); their
//! session drops them when it ends.
//!
//! Locking: one `RwLock` over the version list; lookups take it shared for a
//! moment and hand out `Arc<TableDef>`s, so a statement keeps the definition
//! it planned with even if the table is dropped meanwhile.

mod basetype;
mod cast;
mod check;
mod comment;
mod fkey;
mod function;
mod index;
mod operator;
mod persist;
pub mod reloptions;
mod sequence;
mod types;
mod versions;
mod view;

pub use basetype::{BaseTypeDef, InternalFuncDef};
pub use cast::CastDef;
pub use check::CheckConstraint;
pub use fkey::{FkAction, ForeignKeyDef};
pub use function::{FuncArg, FunctionDef, Language};
pub use operator::OperatorDef;
pub use sequence::SequenceDef;
pub use types::{DomainCheck, DomainDef};
pub use view::{ViewColumn, ViewDef};

pub use index::{IndexColumn, IndexDef, IndexPredicate, PredicateBinder};

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, RwLock};

use crate::err;
use crate::error::Result;
use crate::txn::clog::XidStatus;
use crate::txn::{Snapshot, TxnManager, Xid, INVALID_XID};
use crate::types::{value_to_string, DataType, Value};

/// Object ids below this are reserved; user tables start here, as in
/// PostgreSQL.
pub const FIRST_USER_OID: u32 = 16384;

/// The name to look a table up by when the statement wrote `schema.name`:
/// `pg_temp.name` and `public.name` name one namespace
/// ([`Catalog::lookup`]); any other schema is not told apart (heapdb has no
/// others), and an unqualified name is searched for in the session's
/// temporary namespace first.
pub fn qualified_name<'a>(schema: Option<&str>, name: &'a str) -> std::borrow::Cow<'a, str> {
    match schema {
        Some(s @ ("pg_temp" | "public")) => format!("{s}.{name}").into(),
        _ => name.into(),
    }
}

/// One column of a table.
#[derive(Debug, Clone, PartialEq)]
pub struct ColumnDef {
    /// Column name (already case-folded).
    pub name: String,
    /// Its type, with modifier.
    pub ty: DataType,
    /// `NOT NULL` was declared (or implied by `PRIMARY KEY`).
    pub not_null: bool,
    /// The `DEFAULT` expression as SQL text, re-parsed when used.
    pub default: Option<String>,
    /// The domain the column was declared as (`ty` is its base type).
    pub domain: Option<String>,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

/// Per-column statistics gathered by ANALYZE.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ColumnStats {
    /// Fraction of rows that are NULL.
    pub null_frac: f64,
    /// Average width in bytes of non-NULL values.
    pub avg_width: f64,
    /// Number of distinct values; negative means a fraction of the row count,
    /// as PostgreSQL's `stadistinct`.
    pub n_distinct: f64,
    /// Most common values (text form) with their frequencies.
    pub mcv: Vec<(String, f64)>,
    /// Histogram bounds (text form) of the values not in `mcv`.
    pub histogram: Vec<String>,
    /// Correlation between the values' order and the rows' physical order
    /// in the sample (-1 to 1; PostgreSQL's `STATISTIC_KIND_CORRELATION`),
    /// `None` with fewer than two non-NULL values.
    pub correlation: Option<f64>,
}

/// A value as a number, for histogram interpolation and width-free
/// comparisons: integers, floats, numerics, dates and timestamps.
pub fn as_scalar(v: &Value) -> Option<f64> {
    match v {
        Value::Int2(x) => Some(*x as f64),
        Value::Int4(x) => Some(*x as f64),
        Value::Int8(x) => Some(*x as f64),
        Value::Float4(x) => Some(*x as f64),
        Value::Float8(x) => Some(*x),
        Value::Numeric(_) => value_to_string(v).parse().ok(),
        Value::Date(x) => Some(*x as f64),
        Value::Timestamp(x) | Value::TimestampTz(x) => Some(*x as f64),
        _ => None,
    }
}

/// Table-level statistics.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct TableStats {
    /// Estimated number of live rows.
    pub reltuples: f64,
    /// Number of pages when last measured.
    pub relpages: u32,
    /// Per-column statistics, by column position (`None` if not analyzed).
    pub columns: Vec<Option<ColumnStats>>,
}

/// A table's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct TableDef {
    /// The table's object id (stable across TRUNCATE).
    pub oid: u32,
    /// Name (case-folded unless quoted).
    pub name: String,
    /// The file the heap lives in (`base/<relfilenode>`); changes on TRUNCATE.
    pub relfilenode: u32,
    /// The columns, in order.
    pub columns: Vec<ColumnDef>,
    /// Statistics from the last ANALYZE or VACUUM.
    pub stats: Option<TableStats>,
    /// The table's indexes, in creation order.
    pub indexes: Vec<IndexDef>,
    /// Its CHECK constraints, by name (the order they are checked in, as
    /// PostgreSQL's `CheckConstraintFetch` sorts them).
    pub checks: Vec<CheckConstraint>,
    /// The tables it inherits from (`INHERITS`), by oid, in the order
    /// written (PostgreSQL's `pg_inherits`).
    pub parents: Vec<u32>,
    /// Whether some table was ever made to inherit from it (PostgreSQL's
    /// `relhassubclass`: set when a child is created, never cleared, so a
    /// scan looks for children only when there may be some).
    pub has_subclass: bool,
    /// Its storage parameters, `name=value` as written
    /// (`pg_class.reloptions`; see [`reloptions`]).
    pub options: Vec<String>,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

impl TableDef {
    /// The position of column `name`, if it exists.
    pub fn column_index(&self, name: &str) -> Option<usize> {
        self.columns.iter().position(|c| c.name == name)
    }
}

/// One version of a table definition.
#[derive(Debug, Clone)]
struct Version {
    xmin: Xid,
    xmax: Xid,
    def: Arc<TableDef>,
    /// The temporary namespace the table lives in; 0 for a permanent one.
    temp_ns: u32,
}

#[derive(Debug, Default)]
struct State {
    versions: Vec<Version>,
    next_oid: u32,
    /// The views' versions (`view`).
    views: Vec<view::ViewVersion>,
    /// The user functions' versions (`function`).
    functions: Vec<function::FuncVersion>,
    /// The domains' versions (`types`).
    types: Vec<types::TypeVersion>,
    /// The foreign-key constraints' versions (`fkey`).
    fkeys: Vec<fkey::FkVersion>,
    /// The user operators' versions (`operator`).
    operators: Vec<operator::OperVersion>,
    /// The base and shell types' versions (`basetype`).
    base_types: Vec<basetype::BaseTypeVersion>,
    /// The internal functions' versions (`basetype`).
    internal_funcs: Vec<basetype::InternalFuncVersion>,
    /// The user-defined casts' versions (`cast`).
    casts: Vec<cast::CastVersion>,
    /// The sequences' versions (`sequence`).
    sequences: Vec<sequence::SeqVersion>,
}

/// The catalog of one database. Thread-safe.
#[derive(Debug)]
pub struct Catalog {
    path: PathBuf,
    state: RwLock<State>,
    /// Held while the file is written: one writer at a time, each writing
    /// the state as it is once it holds this, so the file never goes back
    /// to an older state (two commits persisting at once, the older
    /// snapshot renamed last) and no writer renames another's half-written
    /// temporary file.
    persisting: Mutex<()>,
}

/// What the visibility of a catalog version needs to know: the reader's
/// snapshot and a way to ask whether a transaction committed.
pub struct CatalogView<'a> {
    /// The reader's snapshot.
    pub snapshot: &'a Snapshot,
    /// The transaction manager, for commit status.
    pub txns: &'a TxnManager,
    /// The reader's temporary namespace (0: none yet): its temporary
    /// tables are visible, and found before permanent ones.
    pub temp_ns: u32,
}

impl CatalogView<'_> {
    fn committed_visible(&self, xid: Xid) -> bool {
        if self.snapshot.is_current(xid) {
            return true;
        }
        if self.snapshot.xid_in_progress(xid) {
            return false;
        }
        matches!(self.txns.status(xid), Ok(XidStatus::Committed))
    }

    fn sees(&self, v: &Version) -> bool {
        (v.temp_ns == 0 || v.temp_ns == self.temp_ns)
            && self.committed_visible(v.xmin)
            && (v.xmax == INVALID_XID || !self.committed_visible(v.xmax))
    }

    /// Whether transaction `x` holds a claim on the versions it made or
    /// deleted, whatever the reader's snapshot says: it is still running,
    /// or it committed. Asked in that order, as PostgreSQL's
    /// `HeapTupleSatisfies*` do: a transaction records its outcome in the
    /// commit log before it leaves the running set, so once it is seen not
    /// running its status is final. Asked the other way round, a commit
    /// between the two questions reads as an abort.
    fn claimed_by(&self, x: Xid) -> bool {
        self.txns.is_running(x) || matches!(self.txns.status(x), Ok(XidStatus::Committed))
    }

    /// Whether a version made by `xmin` and not deleted (`xmax`) that the
    /// snapshot does not see is nevertheless there for transaction `own`:
    /// another transaction is creating it or created it after the
    /// snapshot was taken. A name it holds is taken (PostgreSQL's unique
    /// index on `pg_class`'s names waits for, and then sees, the latest
    /// committed row).
    fn made_by_other(&self, xmin: Xid, xmax: Xid, own: Xid) -> bool {
        xmax == INVALID_XID && xmin != own && self.claimed_by(xmin)
    }

    /// Fails with 40001 when transaction `own` may not delete or replace a
    /// catalog version whose `xmax` is `xmax`: another transaction that is
    /// running or has committed deleted it first (PostgreSQL's "tuple
    /// concurrently updated"). The one check of tables, views and
    /// functions.
    fn check_not_claimed(&self, xmax: Xid, own: Xid) -> Result<()> {
        if xmax != INVALID_XID && xmax != own && self.claimed_by(xmax) {
            return Err(err!(
                SerializationFailure,
                "could not serialize access due to concurrent update"
            ));
        }
        Ok(())
    }
}

impl Catalog {
    /// Opens the catalog of the data directory `dir` (created when `create`,
    /// a new database; otherwise a missing file is an error), keeping only
    /// versions whose creating transaction committed. The file is rewritten
    /// only when that changed something (so a full disk does not stop an
    /// open).
    pub fn open(dir: &Path, txns: &TxnManager, create: bool) -> Result<Catalog> {
        Self::open_with(dir, txns, create, &index::no_binder)
    }

    /// [`Catalog::open`] binding partial index predicates with `bind`.
    pub fn open_with(
        dir: &Path,
        txns: &TxnManager,
        create: bool,
        bind: &PredicateBinder,
    ) -> Result<Catalog> {
        let path = dir.join("catalog");
        let mut state = if create && !path.exists() {
            State {
                versions: Vec::new(),
                next_oid: FIRST_USER_OID,
                views: Vec::new(),
                functions: Vec::new(),
                types: Vec::new(),
                fkeys: Vec::new(),
                operators: Vec::new(),
                base_types: Vec::new(),
                internal_funcs: Vec::new(),
                casts: Vec::new(),
                sequences: Vec::new(),
            }
        } else {
            persist::read(&path, bind)?
        };
        let before = (
            state.versions.len(),
            state.versions.iter().map(|v| v.xmax).collect::<Vec<_>>(),
        );
        let committed = |x: Xid| matches!(txns.status(x), Ok(XidStatus::Committed));
        state.versions.retain(|v| committed(v.xmin));
        for v in &mut state.versions {
            if v.xmax != INVALID_XID && !committed(v.xmax) {
                v.xmax = INVALID_XID;
            }
        }
        state.versions.retain(|v| v.xmax == INVALID_XID);
        let views_changed = view::settle(&mut state.views, &committed)
            | function::settle(&mut state.functions, &committed)
            | types::settle(&mut state.types, &committed)
            | fkey::settle(&mut state.fkeys, &committed)
            | operator::settle(&mut state.operators, &committed)
            | versions::settle(&mut state.base_types, &committed)
            | versions::settle(&mut state.internal_funcs, &committed)
            | versions::settle(&mut state.casts, &committed)
            | versions::settle(&mut state.sequences, &committed);
        let changed = create
            || views_changed
            || before
                != (
                    state.versions.len(),
                    state.versions.iter().map(|v| v.xmax).collect::<Vec<_>>(),
                );
        let cat = Catalog {
            path,
            state: RwLock::new(state),
            persisting: Mutex::new(()),
        };
        if changed {
            cat.persist()?;
        }
        Ok(cat)
    }

    /// Reads and checks the catalog file of `dir` without keeping it (an
    /// open checks every file before it writes anything).
    pub fn check_file(dir: &Path, bind: &PredicateBinder) -> Result<()> {
        persist::read(&dir.join("catalog"), bind).map(|_| ())
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, State> {
        self.state.read().expect("catalog lock poisoned")
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, State> {
        self.state.write().expect("catalog lock poisoned")
    }

    /// The table `name` as `view` sees it: its own temporary table of that
    /// name first, else the permanent one. A name qualified by
    /// [`qualified_name`] (`pg_temp.t`, `public.t`) is looked up in that
    /// namespace only.
    pub fn lookup(&self, view: &CatalogView, name: &str) -> Option<Arc<TableDef>> {
        if let Some((schema, rel)) = name.split_once('.') {
            match schema {
                "pg_temp" => return self.lookup_in(view, rel, true),
                "public" => return self.lookup_in(view, rel, false),
                _ => {}
            }
        }
        let st = self.read();
        let mut found = None;
        for v in st.versions.iter().filter(|v| v.def.name == name) {
            if view.sees(v) {
                if v.temp_ns != 0 {
                    return Some(v.def.clone());
                }
                found = Some(v.def.clone());
            }
        }
        found
    }

    /// The table `name` of one namespace as `view` sees it: its temporary
    /// namespace (`pg_temp.name`) when `temp`, else the permanent one
    /// (`public.name`).
    pub fn lookup_in(&self, view: &CatalogView, name: &str, temp: bool) -> Option<Arc<TableDef>> {
        self.read()
            .versions
            .iter()
            .find(|v| v.def.name == name && (v.temp_ns != 0) == temp && view.sees(v))
            .map(|v| v.def.clone())
    }

    /// The table of object id `oid` as `view` sees it.
    pub fn by_oid(&self, view: &CatalogView, oid: u32) -> Option<Arc<TableDef>> {
        self.read()
            .versions
            .iter()
            .find(|v| v.def.oid == oid && view.sees(v))
            .map(|v| v.def.clone())
    }

    /// The name that finds `def` whatever shadows it: `pg_temp.name` for a
    /// temporary table, `public.name` for a permanent one.
    pub fn qualified(&self, def: &TableDef) -> String {
        let schema = if self.is_temp(def.oid) {
            "pg_temp"
        } else {
            "public"
        };
        format!("{schema}.{}", def.name)
    }

    /// Whether table `oid` is a temporary one.
    pub fn is_temp(&self, oid: u32) -> bool {
        self.read()
            .versions
            .iter()
            .any(|v| v.def.oid == oid && v.temp_ns != 0)
    }

    /// The names of the live temporary tables of namespace `ns` (those its
    /// session must drop when it ends).
    pub fn temp_tables(&self, ns: u32) -> Vec<String> {
        let mut out: Vec<String> = self
            .read()
            .versions
            .iter()
            .filter(|v| ns != 0 && v.temp_ns == ns && v.xmax == INVALID_XID)
            .map(|v| v.def.name.clone())
            .collect();
        out.sort();
        out.dedup();
        out
    }

    /// Every relation file of every temporary table in the catalog, heaps
    /// and indexes: at open, what a crashed process left behind.
    pub fn temp_relation_files(&self) -> Vec<u32> {
        let mut out = Vec::new();
        for v in self.read().versions.iter().filter(|v| v.temp_ns != 0) {
            out.push(v.def.relfilenode);
            out.extend(v.def.indexes.iter().map(|i| i.relfilenode));
        }
        out
    }

    /// Removes every temporary table from the catalog and writes the file
    /// (at open, once [`Catalog::temp_relation_files`] are dropped: no
    /// session owns them any more).
    pub fn forget_temp(&self) -> Result<()> {
        let removed = {
            let mut st = self.write();
            let before = st.versions.len();
            st.versions.retain(|v| v.temp_ns == 0);
            before != st.versions.len()
        };
        if removed {
            self.persist()?;
        }
        Ok(())
    }

    /// Like [`lookup`](Self::lookup) but an error `relation "name" does not
    /// exist` (42P01) when absent.
    pub fn get(&self, view: &CatalogView, name: &str) -> Result<Arc<TableDef>> {
        self.lookup(view, name)
            .ok_or_else(|| err!(UndefinedTable, "relation \"{name}\" does not exist"))
    }

    /// Whether `def` (the version some snapshot saw) still describes the
    /// table's storage: no transaction that committed since (nor `own`) has
    /// dropped the table, moved it to a new file (TRUNCATE) or changed its
    /// columns. A newer version that only carries new statistics or
    /// descriptions does not count. Checked after locking a table, when the
    /// snapshot may be older than the lock.
    pub fn storage_is_current(&self, txns: &TxnManager, own: Xid, def: &TableDef) -> bool {
        let committed = |x: Xid| x == own || matches!(txns.status(x), Ok(XidStatus::Committed));
        self.read().versions.iter().any(|v| {
            v.def.oid == def.oid
                && committed(v.xmin)
                && (v.xmax == INVALID_XID || !committed(v.xmax))
                // The very version (the common case) needs no comparison
                // of its columns (names and all, once per statement).
                && (std::ptr::eq(&*v.def, def)
                    || (v.def.relfilenode == def.relfilenode
                        && comment::same_apart_from_comments(&v.def, def)))
        })
    }

    /// Every table `view` sees, by name.
    pub fn tables(&self, view: &CatalogView) -> Vec<Arc<TableDef>> {
        let mut out: Vec<_> = self
            .read()
            .versions
            .iter()
            .filter(|v| view.sees(v))
            .map(|v| v.def.clone())
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// Allocates a fresh object id (also used for relfilenodes).
    pub fn next_oid(&self) -> u32 {
        let mut st = self.write();
        let oid = st.next_oid;
        st.next_oid += 1;
        oid
    }

    /// Adds a table created by transaction `xid`. Fails with 42P07 when a
    /// table of that name is visible to `view` or being created by another
    /// running transaction.
    pub fn create(&self, view: &CatalogView, xid: Xid, def: TableDef) -> Result<Arc<TableDef>> {
        self.create_in(view, xid, def, false)
    }

    /// [`Catalog::create`] in the reader's temporary namespace when `temp`
    /// (which `view.temp_ns` names), else the permanent one: a name clashes
    /// only with relations of the same namespace.
    pub fn create_in(
        &self,
        view: &CatalogView,
        xid: Xid,
        def: TableDef,
        temp: bool,
    ) -> Result<Arc<TableDef>> {
        let temp_ns = if temp { view.temp_ns } else { 0 };
        let mut st = self.write();
        let clash = st.versions.iter().any(|v| {
            v.temp_ns == temp_ns
                && (v.def.name == def.name || v.def.indexes.iter().any(|i| i.name == def.name))
                && (view.sees(v) || view.made_by_other(v.xmin, v.xmax, xid))
        });
        if clash || (!temp && Self::view_name_taken(&st, view, xid, &def.name)) {
            return Err(err!(
                DuplicateTable,
                "relation \"{}\" already exists",
                def.name
            ));
        }
        let def = Arc::new(def);
        st.versions.push(Version {
            xmin: xid,
            xmax: INVALID_XID,
            def: def.clone(),
            temp_ns,
        });
        Ok(def)
    }

    /// Marks the version of table `oid` that `view` sees as deleted by
    /// `xid`, optionally replacing it with `replacement` (TRUNCATE's new
    /// relfilenode, ANALYZE's new statistics). Fails with 40001 when another
    /// running or committed-but-invisible transaction already changed it.
    pub fn replace(
        &self,
        view: &CatalogView,
        xid: Xid,
        oid: u32,
        replacement: Option<TableDef>,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = st
            .versions
            .iter()
            .position(|v| v.def.oid == oid && view.sees(v))
        else {
            return Err(err!(
                UndefinedTable,
                "relation with OID {oid} does not exist"
            ));
        };
        let old = &mut st.versions[pos];
        view.check_not_claimed(old.xmax, xid)?;
        if old.xmin == xid {
            // Created or replaced earlier in this same transaction: change
            // in place, there is no older state to keep for anyone.
            match replacement {
                Some(def) => old.def = Arc::new(def),
                None => {
                    st.versions.remove(pos);
                }
            }
            return Ok(());
        }
        old.xmax = xid;
        let temp_ns = old.temp_ns;
        if let Some(def) = replacement {
            st.versions.push(Version {
                xmin: xid,
                xmax: INVALID_XID,
                def: Arc::new(def),
                temp_ns,
            });
        }
        Ok(())
    }

    /// Sets the statistics of table `oid`, in the version `view` sees, in
    /// place: no new version, no transaction id, so nothing a concurrent
    /// DROP, TRUNCATE or ALTER could conflict with (PostgreSQL's
    /// `heap_inplace_update` of `relpages` and `reltuples`). The caller
    /// holds a lock that keeps other maintenance and DDL off the table.
    /// Written to the file at once, as PostgreSQL logs an in-place update
    /// at once; not undone by an abort. Returns whether anything changed
    /// (unchanged statistics write nothing).
    pub fn set_stats_in_place(
        &self,
        view: &CatalogView,
        oid: u32,
        stats: TableStats,
    ) -> Result<bool> {
        {
            let mut st = self.write();
            let Some(v) = st
                .versions
                .iter_mut()
                .find(|v| v.def.oid == oid && view.sees(v))
            else {
                return Err(err!(
                    UndefinedTable,
                    "relation with OID {oid} does not exist"
                ));
            };
            if v.def.stats.as_ref() == Some(&stats) {
                return Ok(false);
            }
            let mut def = TableDef::clone(&v.def);
            def.stats = Some(stats);
            // Statements keep the definition they planned with; later
            // lookups get the new one.
            v.def = Arc::new(def);
        }
        self.persist()?;
        Ok(true)
    }

    /// Forgets the changes of aborted transaction `xid` (in memory; the file
    /// is cleaned on the next write or open).
    pub fn abort(&self, xid: Xid) {
        let mut st = self.write();
        st.versions.retain(|v| v.xmin != xid);
        for v in &mut st.versions {
            if v.xmax == xid {
                v.xmax = INVALID_XID;
            }
        }
        view::abort(&mut st.views, xid);
        function::abort(&mut st.functions, xid);
        types::abort(&mut st.types, xid);
        fkey::abort(&mut st.fkeys, xid);
        operator::abort(&mut st.operators, xid);
        versions::abort(&mut st.base_types, xid);
        versions::abort(&mut st.internal_funcs, xid);
        versions::abort(&mut st.casts, xid);
        versions::abort(&mut st.sequences, xid);
    }

    /// Drops versions that no snapshot can see any more: those deleted by a
    /// committed transaction older than `horizon` (the oldest xmin).
    pub fn prune(&self, txns: &TxnManager, horizon: Xid) {
        let mut st = self.write();
        st.versions.retain(|v| {
            v.xmax == INVALID_XID
                || v.xmax >= horizon
                || !matches!(txns.status(v.xmax), Ok(XidStatus::Committed))
        });
        let committed = |x: Xid| matches!(txns.status(x), Ok(XidStatus::Committed));
        view::prune(&mut st.views, &committed, horizon);
        function::prune(&mut st.functions, &committed, horizon);
        types::prune(&mut st.types, &committed, horizon);
        fkey::prune(&mut st.fkeys, &committed, horizon);
        operator::prune(&mut st.operators, &committed, horizon);
        versions::prune(&mut st.base_types, &committed, horizon);
        versions::prune(&mut st.internal_funcs, &committed, horizon);
        versions::prune(&mut st.casts, &committed, horizon);
        versions::prune(&mut st.sequences, &committed, horizon);
    }

    /// Writes the catalog file (before the changing transaction's commit is
    /// recorded, see the module doc).
    pub fn persist(&self) -> Result<()> {
        let _one = self.persisting.lock().unwrap_or_else(|p| p.into_inner());
        let st = self.read();
        persist::write(&self.path, &st)
    }
}

#[cfg(test)]
mod tests;
