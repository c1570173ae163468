//! Views in the catalog: PostgreSQL's `pg_class` rows of relkind `v`, with
//! their `_RETURN` rule (the defining query) and their `pg_depend` entries
//! (the relations the query reads).
//!
//! A view is stored as SQL text (the parser's canonical print of the
//! defining query) and re-bound each time a statement uses it: the planner
//! substitutes the parsed query for the view's name in FROM, as
//! PostgreSQL's rewriter does (`plan::select::view`). Its output columns
//! (names and types) are fixed when it is created; `CREATE OR REPLACE`
//! may only add columns at the end.
//!
//! Views are versioned with the same `xmin`/`xmax` rules as tables (see the
//! parent module): created, replaced and dropped transactionally, persisted
//! in the same checksummed file before the commit is recorded, cleaned of
//! uncommitted versions on open. Views share the relation namespace with
//! tables: no name is both.
//!
//! Invariants: `columns` is not empty and its names are distinct;
//! `depends_on` names relations (tables or views, by oid) that existed when
//! the view was created, and a relation a visible view depends on is only
//! dropped together with that view (`session::view`).

use std::sync::Arc;

use heapdb_grammar::ast;

use super::persist::{corrupt, esc, parse_type_tag, type_tag, unesc};
use super::{Catalog, CatalogView, State};
use crate::err;
use crate::error::Result;
use crate::txn::Xid;
use crate::types::DataType;

/// One output column of a view.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewColumn {
    /// Column name.
    pub name: String,
    /// Its type (never `unknown`: a literal's type is resolved to text).
    pub ty: DataType,
    /// Its description (`COMMENT ON COLUMN`), never empty.
    pub comment: Option<String>,
}

/// A view's definition.
#[derive(Debug, Clone, PartialEq)]
pub struct ViewDef {
    /// The view's object id (kept by `CREATE OR REPLACE`).
    pub oid: u32,
    /// Name (shares the namespace of tables).
    pub name: String,
    /// The output columns, in order.
    pub columns: Vec<ViewColumn>,
    /// The defining query as SQL text.
    pub text: String,
    /// The same query, parsed.
    pub query: Arc<ast::Query>,
    /// The relations (tables and views) the query reads, by oid.
    pub depends_on: Vec<u32>,
    /// `WITH [CASCADED | LOCAL] CHECK OPTION` (PostgreSQL's
    /// `check_option` reloption): rows written through the view must
    /// satisfy its condition.
    pub check_option: Option<ast::CheckOption>,
    /// Its description (`COMMENT ON`), never empty.
    pub comment: Option<String>,
}

impl ViewDef {
    /// A definition of `text`, which must parse as a query.
    pub fn new(
        oid: u32,
        name: String,
        columns: Vec<ViewColumn>,
        text: String,
        depends_on: Vec<u32>,
    ) -> Result<ViewDef> {
        let query = match heapdb_grammar::parse_one(&text) {
            Ok(ast::Statement::Query(q)) => Arc::new(*q),
            _ => return Err(err!(InternalError, "view \"{name}\" has no valid query")),
        };
        Ok(ViewDef {
            comment: None,
            oid,
            name,
            columns,
            text,
            query,
            depends_on,
            check_option: None,
        })
    }

    /// This definition with `WITH ... CHECK OPTION` set to `check_option`.
    pub fn with_check_option(mut self, check_option: Option<ast::CheckOption>) -> ViewDef {
        self.check_option = check_option;
        self
    }
}

/// One version of a view definition ([`super::versions`]).
pub(super) type ViewVersion = super::versions::Version<ViewDef>;

impl Catalog {
    /// The view `name` as `view` sees it.
    pub fn lookup_view(&self, view: &CatalogView, name: &str) -> Option<Arc<ViewDef>> {
        super::versions::find(&self.read().views, view, |d| d.name == name)
    }

    /// Whether any version of a view is named `name` (a cheap first test
    /// before a look-up under a snapshot).
    pub fn any_view_named(&self, name: &str) -> bool {
        self.read().views.iter().any(|v| v.def.name == name)
    }

    /// Every view `view` sees, by name.
    pub fn views(&self, view: &CatalogView) -> Vec<Arc<ViewDef>> {
        let mut out: Vec<_> = super::versions::visible(&self.read().views, view, |_| true);
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }

    /// The views `view` sees that read relation `oid` directly, in
    /// creation order (as PostgreSQL lists dependents: by oid).
    pub fn view_dependents(&self, view: &CatalogView, oid: u32) -> Vec<Arc<ViewDef>> {
        let mut out: Vec<_> =
            super::versions::visible(&self.read().views, view, |d| d.depends_on.contains(&oid));
        out.sort_by_key(|v| v.oid);
        out
    }

    /// Whether a view named `name` is visible to `view` or being created
    /// by another running transaction (a table of that name would clash).
    pub(super) fn view_name_taken(st: &State, view: &CatalogView, xid: Xid, name: &str) -> bool {
        st.views.iter().any(|v| {
            v.def.name == name && (view.sees_object(v) || view.made_by_other(v.xmin, v.xmax, xid))
        }) || Self::sequence_name_taken(st, view, xid, name)
    }

    /// Adds a view created by transaction `xid`. Fails with 42P07 when a
    /// relation of that name is visible to `view` or being created by
    /// another running transaction.
    pub fn create_view(&self, view: &CatalogView, xid: Xid, def: ViewDef) -> Result<Arc<ViewDef>> {
        let mut st = self.write();
        let table_clash = st.versions.iter().any(|v| {
            (v.def.name == def.name || v.def.indexes.iter().any(|i| i.name == def.name))
                && (view.sees(v) || view.made_by_other(v.xmin, v.xmax, xid))
        });
        if table_clash || Self::view_name_taken(&st, view, xid, &def.name) {
            return Err(err!(
                DuplicateTable,
                "relation \"{}\" already exists",
                def.name
            ));
        }
        let def = Arc::new(def);
        super::versions::insert(&mut st.views, xid, def.clone());
        Ok(def)
    }

    /// Marks the version of view `oid` that `view` sees as deleted by
    /// `xid`, optionally replacing it (`CREATE OR REPLACE VIEW`). Fails
    /// with 40001 when another transaction already changed it.
    pub fn replace_view(
        &self,
        view: &CatalogView,
        xid: Xid,
        oid: u32,
        replacement: Option<ViewDef>,
    ) -> Result<()> {
        let mut st = self.write();
        let Some(pos) = super::versions::position(&st.views, view, |d| d.oid == oid) else {
            return Err(err!(
                UndefinedTable,
                "relation with OID {oid} does not exist"
            ));
        };
        super::versions::replace(&mut st.views, pos, view, xid, replacement)
    }
}

pub(super) use super::versions::{abort, prune, settle};

/// Appends the catalog file's lines of every view version:
/// `view <oid> <xmin> <xmax> <name> <text> <n> <dep> ...`, then
/// `viewopt local|cascaded` for a view with a check option, then one
/// `viewcol <name> <type>` line per column.
pub(super) fn write(text: &mut String, views: &[ViewVersion]) {
    for v in views {
        let d = &v.def;
        text.push_str(&format!(
            "view {} {} {} {} {} {}",
            d.oid,
            v.xmin,
            v.xmax,
            esc(&d.name),
            esc(&d.text),
            d.depends_on.len()
        ));
        for dep in &d.depends_on {
            text.push_str(&format!(" {dep}"));
        }
        text.push('\n');
        super::comment::write(text, &d.comment);
        match d.check_option {
            Some(ast::CheckOption::Local) => text.push_str("viewopt local\n"),
            Some(ast::CheckOption::Cascaded) => text.push_str("viewopt cascaded\n"),
            None => {}
        }
        for c in &d.columns {
            text.push_str(&format!("viewcol {} {}\n", esc(&c.name), type_tag(&c.ty)));
            super::comment::write(text, &c.comment);
        }
    }
}

/// A view being read from the file: its version fields and definition.
pub(super) type Pending = (Xid, Xid, ViewDef);

/// Reads a `view` line (split on spaces).
pub(super) fn parse_view(f: &[&str]) -> Result<Pending> {
    let bad = || corrupt("bad view line");
    let num = |i: usize| -> Result<u64> { f.get(i).and_then(|s| s.parse().ok()).ok_or_else(bad) };
    let n = num(6)? as usize;
    if f.len() != 7 + n {
        return Err(bad());
    }
    let depends_on = (0..n)
        .map(|i| num(7 + i).map(|d| d as u32))
        .collect::<Result<Vec<_>>>()?;
    let name = unesc(f[4])?;
    let text = unesc(f[5])?;
    let def = ViewDef::new(num(1)? as u32, name, Vec::new(), text, depends_on)
        .map_err(|_| corrupt("bad view query"))?;
    Ok((num(2)? as Xid, num(3)? as Xid, def))
}

/// Reads a `viewcol` line into the view before it.
pub(super) fn parse_column(f: &[&str], view: Option<&mut Pending>) -> Result<()> {
    let (_, _, v) = view.ok_or_else(|| corrupt("viewcol before view"))?;
    if f.len() != 3 {
        return Err(corrupt("bad viewcol line"));
    }
    v.columns.push(ViewColumn {
        comment: None,
        name: unesc(f[1])?,
        ty: parse_type_tag(f[2])?,
    });
    Ok(())
}

/// Reads a `viewopt` line (the check option) into the view before it.
pub(super) fn parse_option(f: &[&str], view: Option<&mut Pending>) -> Result<()> {
    let (_, _, v) = view.ok_or_else(|| corrupt("viewopt before view"))?;
    v.check_option = match f {
        [_, "local"] => Some(ast::CheckOption::Local),
        [_, "cascaded"] => Some(ast::CheckOption::Cascaded),
        _ => return Err(corrupt("bad viewopt line")),
    };
    Ok(())
}

/// The versions of the views read from the file.
pub(super) fn finish(pending: Vec<Pending>) -> Result<Vec<ViewVersion>> {
    pending
        .into_iter()
        .map(|(xmin, xmax, def)| {
            if def.columns.is_empty() {
                return Err(corrupt("view without columns"));
            }
            Ok(ViewVersion {
                xmin,
                xmax,
                def: Arc::new(def),
            })
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::super::persist;
    use super::*;
    use crate::storage::control::ControlFile;
    use crate::txn::{TxnManager, INVALID_XID};
    use std::sync::Mutex;

    fn def(oid: u32, name: &str, deps: Vec<u32>) -> ViewDef {
        ViewDef::new(
            oid,
            name.into(),
            vec![
                ViewColumn {
                    comment: None,
                    name: "a b".into(),
                    ty: DataType::Int4,
                },
                ViewColumn {
                    comment: None,
                    name: "c".into(),
                    ty: DataType::Varchar(Some(3)),
                },
            ],
            "SELECT a AS \"a b\", 'x%y z' AS c FROM t".into(),
            deps,
        )
        .unwrap()
    }

    /// Views round-trip through the file, and an uncommitted or aborted
    /// creation is gone after reopening while a committed one stays.
    #[test]
    fn views_persist_and_settle_on_open() {
        let dir = tempfile::tempdir().unwrap();
        let (c, _) = ControlFile::open_or_create(dir.path()).unwrap();
        let tm = TxnManager::open(dir.path(), Arc::new(Mutex::new(c))).unwrap();
        let cat = Catalog::open(dir.path(), &tm, true).unwrap();
        let x1 = tm.begin().unwrap();
        let s1 = tm.snapshot(x1, 0);
        let v1 = CatalogView {
            snapshot: &s1,
            txns: &tm,
            temp_ns: 0,
        };
        let kept = def(20000, "kept", vec![16384]).with_check_option(Some(ast::CheckOption::Local));
        cat.create_view(&v1, x1, kept.clone()).unwrap();
        let e = cat
            .create_view(&v1, x1, def(20001, "kept", vec![]))
            .unwrap_err();
        assert_eq!(e.message, "relation \"kept\" already exists");
        tm.commit(x1).unwrap();
        let x2 = tm.begin().unwrap();
        let s2 = tm.snapshot(x2, 0);
        let v2 = CatalogView {
            snapshot: &s2,
            txns: &tm,
            temp_ns: 0,
        };
        cat.create_view(&v2, x2, def(20002, "lost", vec![20000]))
            .unwrap();
        assert_eq!(cat.view_dependents(&v2, 20000).len(), 1);
        cat.persist().unwrap();
        let st =
            persist::read(&dir.path().join("catalog"), &super::super::index::no_binder).unwrap();
        assert_eq!(st.views.len(), 2);
        assert_eq!(*st.views[0].def, kept);
        tm.abort(x2).unwrap();
        drop(cat);
        let cat = Catalog::open(dir.path(), &tm, false).unwrap();
        let after = tm.snapshot(INVALID_XID, 0);
        let va = CatalogView {
            snapshot: &after,
            txns: &tm,
            temp_ns: 0,
        };
        let names: Vec<String> = cat.views(&va).iter().map(|v| v.name.clone()).collect();
        assert_eq!(names, ["kept"]);
        assert!(cat.view_dependents(&va, 20000).is_empty());
    }

    #[test]
    fn damaged_view_lines_are_refused() {
        for line in [
            vec!["view", "1", "2", "0", "=v", "=SELECT%201", "1"],
            vec!["view", "1", "2", "0", "=v", "=SELEC", "0"],
            vec!["view", "1", "2", "0", "=v"],
        ] {
            assert!(parse_view(&line).is_err(), "{line:?}");
        }
        assert!(parse_view(&["view", "1", "2", "0", "=v", "=SELECT%201", "0"]).is_ok());
        assert!(parse_column(&["viewcol", "=a", "int4"], None).is_err());
        let mut pending = parse_view(&["view", "1", "2", "0", "=v", "=SELECT%201", "0"]).ok();
        assert!(parse_option(&["viewopt", "sideways"], pending.as_mut()).is_err());
        assert!(parse_option(&["viewopt", "cascaded"], pending.as_mut()).is_ok());
        assert_eq!(
            pending.map(|p| p.2.check_option),
            Some(Some(ast::CheckOption::Cascaded))
        );
    }
}
