//! What the shell's `\d` and `\dt` show: the tables the session can see,
//! with their columns and storage figures.
//!
//! The tables are read from the catalog under a fresh snapshot taken for
//! the session's own transaction, if one is open (so a table created inside
//! BEGIN is listed), without starting a transaction or touching the commit
//! log.

use crate::catalog::CatalogView;
use crate::error::Result;
use crate::txn::INVALID_XID;

use super::Session;

/// One column of a table, as `\d NAME` shows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ColumnInfo {
    /// Column name.
    pub name: String,
    /// Type as PostgreSQL displays it (`integer`, `character varying(10)`).
    pub type_name: String,
    /// Declared NOT NULL.
    pub not_null: bool,
    /// The default expression as psql shows it, if any.
    pub default: Option<String>,
    /// psql's `Storage` (`plain`, `main`, `extended`).
    pub storage: &'static str,
    /// Its description (`COMMENT ON COLUMN`), `\d+`'s `Description`.
    pub description: Option<String>,
}

/// One packed column of a table and what the packed column cache holds
/// of it (`\d+`'s `Packed columns:`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PackedInfo {
    /// Column name.
    pub name: String,
    /// Pages whose values of the column the cache holds.
    pub pages: u64,
    /// Bytes those entries take.
    pub bytes: u64,
}

/// One table, as `\d` and `\dt+` list it.
#[derive(Debug, Clone, PartialEq)]
pub struct TableInfo {
    /// Table name.
    pub name: String,
    /// The temporary namespace of a temporary table (`pg_temp_3`); `None`
    /// for a permanent one (`public`).
    pub temp_schema: Option<String>,
    /// Its columns in order.
    pub columns: Vec<ColumnInfo>,
    /// Its description (`COMMENT ON TABLE`), `\dt+`'s `Description`.
    pub description: Option<String>,
    /// Pages of the main fork.
    pub pages: u32,
    /// Pages marked all-visible in the visibility map.
    pub all_visible_pages: u32,
    /// Bytes of the main fork.
    pub size_bytes: u64,
    /// Row estimate from the last ANALYZE, if there was one.
    pub rows_estimate: Option<f64>,
    /// The `Indexes:` lines of psql's `\d` (without their indentation),
    /// primary key first, then by name.
    pub indexes: Vec<String>,
    /// The names of its indexes, by name.
    pub index_names: Vec<String>,
    /// Its indexes as `\d INDEX` describes them, by name.
    pub index_details: Vec<IndexInfo>,
    /// The `Foreign-key constraints:` lines of psql's `\d`, by name.
    pub foreign_keys: Vec<String>,
    /// The `Referenced by:` lines of psql's `\d`, by name.
    pub referenced_by: Vec<String>,
    /// The `Check constraints:` lines of psql's `\d`, by name.
    pub checks: Vec<String>,
    /// The tables it inherits from, in the order written (`Inherits:`).
    pub parents: Vec<String>,
    /// The tables inheriting from it directly, by name (`Child tables:`).
    pub children: Vec<String>,
    /// Its storage parameters, `name=value` (`\d+`'s `Options:`).
    pub options: Vec<String>,
    /// Its packed columns (the leading `int4`/`date` ones a scan can read
    /// from the packed column cache), with what the cache holds of each.
    pub packed: Vec<PackedInfo>,
}

impl Session {
    /// Fills `info`'s foreign-key lines from the constraints `view` sees.
    fn describe_foreign_keys(
        &self,
        view: &CatalogView,
        def: &crate::catalog::TableDef,
        info: Option<&mut TableInfo>,
    ) {
        let Some(info) = info else { return };
        let (own, referencing) = self.db.catalog.foreign_keys_of(view, def.oid);
        let table = |oid: u32| self.db.catalog.by_oid(view, oid);
        for fk in own {
            if let Some(parent) = table(fk.ref_table) {
                let d = crate::commands::fkey::constraint_def(&fk, def, &parent);
                info.foreign_keys.push(format!("\"{}\" {d}", fk.name));
            }
        }
        let mut by: Vec<(String, String)> = Vec::new();
        for fk in referencing {
            if let Some(child) = table(fk.table) {
                let d = crate::commands::fkey::constraint_def(&fk, &child, def);
                by.push((
                    fk.name.clone(),
                    format!("TABLE \"{}\" CONSTRAINT \"{}\" {d}", child.name, fk.name),
                ));
            }
        }
        by.sort();
        info.referenced_by = by.into_iter().map(|(_, l)| l).collect();
    }
}

/// One index, as psql's `\d INDEX` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexInfo {
    /// Index name.
    pub name: String,
    /// Per stored column: name, type, whether it is a key column (else an
    /// INCLUDE column), and its definition (the quoted name).
    pub columns: Vec<(String, String, bool, String)>,
    /// Per stored column, its type's storage (`\d+`'s `Storage`).
    pub storage: Vec<&'static str>,
    /// The line under the columns: `primary key, btree, for table
    /// "public.t"`.
    pub footer: String,
}

impl Session {
    /// Every table this session can see, sorted by name.
    pub fn list_tables(&self) -> Result<Vec<TableInfo>> {
        let (xid, cid) = match &self.txn {
            Some(t) => (t.xid, t.cid),
            None => (INVALID_XID, 0),
        };
        let snap = self.db.txns.snapshot(xid, cid);
        let view = CatalogView {
            snapshot: &snap,
            txns: &self.db.txns,
            temp_ns: self.temp_ns,
        };
        let mut defs = self.db.catalog.tables(&view);
        defs.sort_by(|a, b| a.name.cmp(&b.name));
        // A permanent table hidden by a temporary one of the same name is
        // not listed (psql lists the visible relations).
        let temp: Vec<bool> = defs
            .iter()
            .map(|d| self.db.catalog.is_temp(d.oid))
            .collect();
        let hidden = |i: usize| {
            !temp[i]
                && defs
                    .iter()
                    .zip(&temp)
                    .any(|(d, &t)| t && d.name == defs[i].name)
        };
        let keep: Vec<bool> = (0..defs.len()).map(|i| !hidden(i)).collect();
        let defs: Vec<_> = defs
            .into_iter()
            .zip(temp)
            .zip(keep)
            .filter(|(_, k)| *k)
            .map(|(d, _)| d)
            .collect();
        let mut out = Vec::with_capacity(defs.len());
        for (def, temp) in defs {
            let schema = temp.then(|| format!("pg_temp_{}", self.temp_ns));
            let rel = self.db.relation(def.relfilenode)?;
            let vm = rel.inspect_vm()?;
            let pages = vm.len() as u32;
            let all_visible_pages = vm
                .iter()
                .filter(|(_, bits, _)| bits & crate::access::vm::VM_ALL_VISIBLE != 0)
                .count() as u32;
            out.push(TableInfo {
                name: def.name.clone(),
                temp_schema: schema.clone(),
                columns: def
                    .columns
                    .iter()
                    .map(|c| ColumnInfo {
                        name: c.name.clone(),
                        type_name: c.domain.clone().unwrap_or_else(|| c.ty.to_string()),
                        not_null: c.not_null,
                        default: c
                            .default
                            .as_deref()
                            .and_then(|d| crate::plan::check::describe_default(d, &c.ty)),
                        storage: c.ty.storage_name(),
                        description: c.comment.clone(),
                    })
                    .collect(),
                description: def.comment.clone(),
                pages,
                all_visible_pages,
                size_bytes: pages as u64 * crate::storage::BLCKSZ as u64,
                rows_estimate: def.stats.as_ref().map(|s| s.reltuples),
                indexes: crate::commands::indexcmds::describe_indexes(&def),
                index_names: {
                    let mut n: Vec<String> = def.indexes.iter().map(|i| i.name.clone()).collect();
                    n.sort();
                    n
                },
                index_details: index_details(&def, schema.as_deref().unwrap_or("public")),
                foreign_keys: Vec::new(),
                referenced_by: Vec::new(),
                checks: check_lines(&def),
                parents: def
                    .parents
                    .iter()
                    .filter_map(|&p| self.db.catalog.by_oid(&view, p))
                    .map(|p| p.name.clone())
                    .collect(),
                children: {
                    let all = self.db.catalog.tables(&view);
                    let mut c: Vec<String> = all
                        .iter()
                        .filter(|t| t.parents.contains(&def.oid))
                        .map(|t| t.name.clone())
                        .collect();
                    c.sort();
                    c
                },
                options: def.options.clone(),
                packed: packed_info(&def, &rel)?,
            });
            self.describe_foreign_keys(&view, &def, out.last_mut());
        }
        Ok(out)
    }
}

/// `def`'s packed columns and what `rel`'s packed column cache holds of
/// each.
fn packed_info(
    def: &crate::catalog::TableDef,
    rel: &crate::access::heap::HeapRelation,
) -> Result<Vec<PackedInfo>> {
    let desc = crate::exec::scan::tuple_desc(def)?;
    let types: Vec<_> = def.columns.iter().map(|c| c.ty).collect();
    let Some(p) = crate::exec::fastpath::packed::PackedLayout::of(&desc, &types) else {
        return Ok(Vec::new());
    };
    let held = rel.packed_cache().columns(p.tag);
    Ok(p.columns
        .iter()
        .zip(held)
        .map(|(&i, (pages, bytes))| PackedInfo {
            name: def.columns[i].name.clone(),
            pages,
            bytes,
        })
        .collect())
}

/// The `Check constraints:` lines of `def`: `"name" CHECK (cond)`.
fn check_lines(def: &crate::catalog::TableDef) -> Vec<String> {
    let names: Vec<String> = def
        .columns
        .iter()
        .map(|c| crate::commands::indexcmds::quoted(&c.name))
        .collect();
    def.checks
        .iter()
        .map(|c| format!("\"{}\" {}", c.name, crate::plan::check::describe(c, &names)))
        .collect()
}

/// `, predicate (a > 10)` for a partial index (the pretty `pg_get_expr`
/// of the predicate in parentheses, as psql's `\d INDEX` footer shows
/// it), empty otherwise.
fn predicate_footer(def: &crate::catalog::TableDef, ix: &crate::catalog::IndexDef) -> String {
    let Some(p) = &ix.predicate else {
        return String::new();
    };
    let names: Vec<String> = def
        .columns
        .iter()
        .map(|c| crate::commands::indexcmds::quoted(&c.name))
        .collect();
    format!(
        ", predicate ({})",
        crate::plan::indexpred::pretty(&p.expr, &names)
    )
}

/// The `\d INDEX` descriptions of the indexes of `def`, by name.
fn index_details(def: &crate::catalog::TableDef, schema: &str) -> Vec<IndexInfo> {
    let mut out: Vec<IndexInfo> = def
        .indexes
        .iter()
        .map(|ix| {
            let nkey = ix.columns.len();
            let columns = ix
                .stored_columns()
                .enumerate()
                .map(|(k, c)| {
                    let col = &def.columns[c];
                    (
                        col.name.clone(),
                        col.ty.to_string(),
                        k < nkey,
                        crate::commands::indexcmds::quoted(&col.name),
                    )
                })
                .collect();
            let kind = match (ix.primary, ix.unique) {
                (true, _) => "primary key, ",
                (false, true) => "unique, ",
                _ => "",
            };
            IndexInfo {
                name: ix.name.clone(),
                storage: ix
                    .stored_columns()
                    .map(|c| def.columns[c].ty.storage_name())
                    .collect(),
                columns,
                footer: format!(
                    "{kind}btree, for table \"{schema}.{}\"{}",
                    def.name,
                    predicate_footer(def, ix)
                ),
            }
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

#[cfg(test)]
mod tests {
    use crate::database::Database;

    #[test]
    fn lists_tables_with_columns_and_pages() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        s.execute("create table b (x int not null default 7, y text)")
            .expect("create b");
        s.execute("create table a (z bigint)").expect("create a");
        s.execute("insert into b select g, 'v' from generate_series(1, 1000) g")
            .expect("insert");
        let t = s.list_tables().expect("list");
        assert_eq!(
            t.iter().map(|t| t.name.as_str()).collect::<Vec<_>>(),
            ["a", "b"]
        );
        assert_eq!(t[0].pages, 0);
        let b = &t[1];
        assert!(b.pages >= 2, "1000 rows span pages: {}", b.pages);
        assert_eq!(b.size_bytes, b.pages as u64 * 8192);
        assert_eq!(b.columns[0].name, "x");
        assert_eq!(b.columns[0].type_name, "integer");
        assert!(b.columns[0].not_null);
        assert_eq!(b.columns[0].default.as_deref(), Some("7"));
        assert_eq!(b.columns[1].type_name, "text");
        assert!(!b.columns[1].not_null);
    }

    #[test]
    fn sees_tables_created_in_the_open_block() {
        let dir = tempfile::tempdir().expect("temp dir");
        let db = Database::open(dir.path()).expect("open");
        let mut s = db.session();
        s.execute("begin; create table t (x int)").expect("create");
        assert_eq!(s.list_tables().expect("list").len(), 1);
        s.execute("rollback").expect("rollback");
        assert!(s.list_tables().expect("list").is_empty());
    }
}
